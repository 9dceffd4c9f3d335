import Bus
import Testing

@testable import PersistCore

struct GapDetectorTests {
    func meta(_ seq: UInt64, _ instance: String = "a", flags: EventMeta.Flags = .retained) -> EventMeta {
        EventMeta(flags: flags, seq: seq, timestampMicros: seq, source: "s", instance: instance)
    }

    @Test func record_consecutive_noGap() {
        var gaps = GapDetector()
        for seq in UInt64(1)...5 { #expect(gaps.record(topic: "t", meta: meta(seq), origin: .live) == .new(missed: 0)) }
    }

    @Test func record_skippedNumbers_reportsHowMany() {
        var gaps = GapDetector()
        _ = gaps.record(topic: "t", meta: meta(1), origin: .live)
        #expect(gaps.record(topic: "t", meta: meta(5), origin: .live) == .new(missed: 3))
    }

    @Test func record_isPerTopicAndInstance() {
        var gaps = GapDetector()
        _ = gaps.record(topic: "t", meta: meta(1, "a"), origin: .live)
        #expect(gaps.record(topic: "t", meta: meta(7, "b"), origin: .live) == .new(missed: 0))
        #expect(gaps.record(topic: "u", meta: meta(9, "a"), origin: .live) == .new(missed: 0))
        #expect(gaps.record(topic: "t", meta: meta(2, "a"), origin: .live) == .new(missed: 0))
    }

    @Test func record_snapshotAlreadySeen_isDuplicate_newerSnapshotIsNoGap() {
        var gaps = GapDetector()
        _ = gaps.record(topic: "t", meta: meta(3), origin: .live)
        #expect(gaps.record(topic: "t", meta: meta(3, flags: [.retained, .snapshot]), origin: .snapshot) == .duplicate)
        #expect(gaps.record(topic: "t", meta: meta(2), origin: .healed) == .duplicate)
        #expect(gaps.record(topic: "t", meta: meta(9), origin: .healed) == .new(missed: 0))
        #expect(gaps.record(topic: "t", meta: meta(10), origin: .live) == .new(missed: 0))
    }

    @Test func record_liveLowerSeq_isPublisherRestart_resetRestarts() {
        var gaps = GapDetector()
        _ = gaps.record(topic: "t", meta: meta(8), origin: .live)
        #expect(gaps.record(topic: "t", meta: meta(1), origin: .live) == .new(missed: 0))
        #expect(gaps.record(topic: "t", meta: meta(2), origin: .live) == .new(missed: 0))
        #expect(gaps.record(topic: "t", meta: meta(1, flags: [.retained, .reset]), origin: .live) == .new(missed: 0))
        #expect(gaps.lastSeq(topic: "t", instance: "a") == 1)
    }
}
