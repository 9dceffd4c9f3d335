import Bus
import Testing

@testable import PersistCore

struct SnapshotRuleTests {
    @Test func replaces_whenNoSnapshot_accepts() {
        #expect(SnapshotRule.replaces(nil, with: SnapshotHead(seq: 1, flags: .retained)))
    }

    @Test func replaces_onlyMovesForward() {
        let current = SnapshotHead(seq: 5, flags: .retained)
        #expect(SnapshotRule.replaces(current, with: SnapshotHead(seq: 6, flags: .retained)))
        #expect(!SnapshotRule.replaces(current, with: SnapshotHead(seq: 5, flags: .retained)))
        #expect(!SnapshotRule.replaces(current, with: SnapshotHead(seq: 1, flags: .retained)))
    }

    @Test func replaces_withResetFlag_acceptsLowerSequence() {
        let current = SnapshotHead(seq: 5, flags: .retained)
        #expect(SnapshotRule.replaces(current, with: SnapshotHead(seq: 1, flags: [.retained, .reset])))
    }

    @Test func replaces_provisionalNeverOverwritesSavedState_evenWithHigherSeqOrReset() {
        let saved = SnapshotHead(seq: 5, flags: .retained)
        #expect(!SnapshotRule.replaces(saved, with: SnapshotHead(seq: 99, flags: [.retained, .provisional])))
        #expect(!SnapshotRule.replaces(saved, with: SnapshotHead(seq: 99, flags: [.retained, .provisional, .reset])))
    }

    @Test func replaces_provisionalOverProvisionalOrNothing_movesForward() {
        #expect(SnapshotRule.replaces(nil, with: SnapshotHead(seq: 1, flags: [.retained, .provisional])))
        let provisional = SnapshotHead(seq: 3, flags: [.retained, .provisional])
        #expect(SnapshotRule.replaces(provisional, with: SnapshotHead(seq: 4, flags: [.retained, .provisional])))
        #expect(SnapshotRule.replaces(provisional, with: SnapshotHead(seq: 4, flags: .retained)))
        #expect(!SnapshotRule.replaces(provisional, with: SnapshotHead(seq: 2, flags: .retained)))
    }
}
