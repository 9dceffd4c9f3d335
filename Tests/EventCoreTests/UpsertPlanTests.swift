import Foundation
import Testing

@testable import EventCore

struct UpsertPlanTests {
    private func event(_ id: String, sequence: Int, title: String = "t", going: Int = 0) -> Event {
        Event(
            id: id, uid: id, sequence: sequence, title: title, startsAt: Fixture.instant("2025-03-01T12:00:00Z"),
            endsAt: Fixture.instant("2025-03-01T13:00:00Z"), goingCount: going)
    }

    @Test func decide_sortsImportsIntoNewUpdatedAndSkipped() {
        let existing = [event("a", sequence: 2, going: 9), event("b", sequence: 1), event("c", sequence: 4)]
        let imported = [event("a", sequence: 3, title: "renamed"), event("b", sequence: 1), event("c", sequence: 1), event("d", sequence: 0)]
        let plan = UpsertPlan.decide(existing: existing, imported: imported)
        #expect(plan.new.map(\.id) == ["d"])
        #expect(plan.updated.map(\.id) == ["a"])
        #expect(plan.updated.first?.title == "renamed")
        #expect(plan.updated.first?.goingCount == 9)
        #expect(plan.skipped.map(\.event.id) == ["b", "c"])
        #expect(plan.skipped.map(\.reason) == ["sequence 1 is not newer than 1", "sequence 1 is not newer than 4"])
    }

    @Test func decide_whenIdRepeatsInTheImport_decidesAgainstTheFirst() {
        let plan = UpsertPlan.decide(existing: [], imported: [event("x", sequence: 1), event("x", sequence: 2), event("x", sequence: 2)])
        #expect(plan.new.map(\.sequence) == [1])
        #expect(plan.updated.map(\.sequence) == [2])
        #expect(plan.skipped.map(\.reason) == ["sequence 2 is not newer than 2"])
    }

    @Test func decide_matchesOccurrencesByTheirOwnIds() throws {
        let series = try Fixture.importFixture("jazz-weekly.ics").events
        var revised = series
        revised[1].sequence = 1
        revised[1].status = .cancelled
        let plan = UpsertPlan.decide(existing: series, imported: revised)
        #expect(plan.new.isEmpty)
        #expect(plan.updated.map(\.id) == ["jazz-night@events.swiftbus.test#20250308T120000Z"])
        #expect(plan.skipped.count == 3)
    }
}
