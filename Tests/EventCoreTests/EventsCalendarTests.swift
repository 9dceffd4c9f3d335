import Bus
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

@testable import EventCore

/// `import`, `export` and the first-start import through the feature (TestStore).
@MainActor
struct EventsCalendarTests {
    static func calendar(sequence: Int, capacity: Int = 2, extra: [String] = []) -> String {
        let lines = Fixture.calendar(
            [
                "BEGIN:VEVENT", "UID:gig@test", "DTSTAMP:20250101T000000Z", "SEQUENCE:\(sequence)", "DTSTART:20250301T200000Z",
                "DTEND:20250301T230000Z", "SUMMARY:Gig rev \(sequence)", "CATEGORIES:Music", "X-SWIFTBUS-CAPACITY:\(capacity)", "END:VEVENT",
            ] + extra)
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static let noUID = ["BEGIN:VEVENT", "DTSTAMP:20250101T000000Z", "DTSTART:20250302T200000Z", "SUMMARY:No uid", "END:VEVENT"]

    @Test func import_malformedCalendar_is400WithItsLine_andImportsNothing() async throws {
        let store = EventsStore.make(EventsStore.state([]))
        let text = try String(contentsOf: Fixture.url("malformed/bad-date.ics"), encoding: .utf8)
        let id = await store.send(request: { .importRequested($0, ics: text, now: EventsStore.now) })
        guard case .failure(let error)? = store.reply(id) else {
            Issue.record("the malformed calendar was not refused")
            return
        }
        #expect(error.status == 400)
        #expect(error.code == "invalid_calendar")
        #expect(error.message.contains("line 7: "), "\(error.message)")
        #expect(store.state.items.isEmpty)
        await store.finish()
    }

    @Test func import_upsertsByUIDAndSequence_keepsPeople_andSaysWhatItSkipped() async {
        let store = EventsStore.make(EventsStore.state([]))
        let first = await store.send(request: { .importRequested($0, ics: Self.calendar(sequence: 1, extra: Self.noUID), now: EventsStore.now) }) {
            var event = EventsStore.event("gig@test", capacity: 2)
            event.uid = "gig@test"
            event.sequence = 1
            event.title = "Gig rev 1"
            $0.items[TopicKey.make("gig@test")] = EventItem(event: event)
        }
        store.expectPublish("events.created", EventsChange.Changed(ids: ["gig@test"], cause: "import"))
        store.expectReply(
            first, EventsReply.Import(imported: ["gig@test"], updated: [], skipped: [.init(line: 14, uid: nil, id: nil, reason: "missing UID")]))

        let key = TopicKey.make("gig@test")
        let joined = await store.send(request: { .rsvpRequested($0, id: "gig@test", going: true, now: EventsStore.now) }) {
            $0.items[key]!.going = ["alice"]
            $0.items[key]!.event.goingCount = 1
        }
        store.expectPublish(
            "events.rsvp.changed",
            EventsChange.RSVPChanged(id: "gig@test", user: "alice", status: "going", promoted: [], goingCount: 1, waitlistCount: 0))
        _ = store.reply(joined)

        let same = await store.send(request: { .importRequested($0, ics: Self.calendar(sequence: 1), now: EventsStore.now) })
        store.expectReply(
            same,
            EventsReply.Import(
                imported: [], updated: [], skipped: [.init(line: nil, uid: "gig@test", id: "gig@test", reason: "sequence 1 is not newer than 1")]))

        let newer = await store.send(request: { .importRequested($0, ics: Self.calendar(sequence: 2, capacity: 5), now: EventsStore.now) }) {
            $0.items[key]!.event.sequence = 2
            $0.items[key]!.event.title = "Gig rev 2"
            $0.items[key]!.event.capacity = 5
        }
        store.expectPublish("events.updated", EventsChange.Changed(ids: ["gig@test"], cause: "import"))
        store.expectReply(newer, EventsReply.Import(imported: [], updated: ["gig@test"], skipped: []))
        #expect(store.state.items[key]?.going == ["alice"])
        await store.finish()
    }

    @Test func export_writesTheEventsInRange_andTheImporterReadsThemBack() async throws {
        let store = EventsStore.make(EventsStore.state([EventItem(event: EventsStore.event("gig@test", capacity: 3), going: ["alice"])]))
        let id = await store.send(request: { .exportRequested($0, ExportRange(), now: EventsStore.now) })
        guard case .success(let bytes)? = store.reply(id) else {
            Issue.record("export failed")
            return
        }
        let export = try JSONDecoder().decode(EventsReply.Export.self, from: Data(bytes))
        #expect(export.count == 1)
        let back = try ICalendarImporter.importEvents(from: export.ics, options: Events.importOptions(now: EventsStore.now))
        #expect(back.events.map(\.id) == ["gig@test"])
        #expect(back.events.first?.capacity == 3)
        #expect(back.events.first?.goingCount == 0)
        let empty = await store.send(request: {
            .exportRequested($0, ExportRange(from: Fixture.instant("2026-01-01T00:00:00Z")), now: EventsStore.now)
        })
        guard case .success(let none)? = store.reply(empty) else { return }
        #expect(try JSONDecoder().decode(EventsReply.Export.self, from: Data(none)).count == 0)
        await store.finish()
    }

    @Test func launched_importsTheInitialCalendarOnlyIntoANewState() async {
        let feature = Events(initialCalendar: Self.calendar(sequence: 0))
        let fresh = EventsStore.make(EventsStore.state([], user: nil), feature: feature)
        await fresh.send(.launched(now: EventsStore.now)) {
            var event = EventsStore.event("gig@test", capacity: 2)
            event.title = "Gig rev 0"
            $0.items[TopicKey.make("gig@test")] = EventItem(event: event)
        }
        fresh.expectPublish("events.created", EventsChange.Changed(ids: ["gig@test"], cause: "import"))
        await fresh.finish()

        var saved = EventsStore.state([], user: nil)
        saved.restored = true
        saved.restoring = ["gone"]
        let restored = EventsStore.make(saved, feature: feature)
        await restored.send(.launched(now: EventsStore.now)) { $0.restoring = [] }
        await restored.finish()
    }

    @Test func sampleCalendar_isShipped_markedAsSample_andHasComingEvents() throws {
        let url = try #require(EventsStartup.sampleCalendarURL)
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains("SAMPLE DATA"))
        let now = Date()
        let result = try ICalendarImporter.importEvents(from: text, options: Events.importOptions(now: now))
        #expect(result.skipped.isEmpty)
        #expect(result.events.filter { $0.startsAt > now }.count > 50)
        #expect(try EventsStartup.initialCalendar(path: nil, sample: true) == text)
        #expect(throws: ConfigurationError.self) {
            try EventsStartup.initialCalendar(path: Fixture.url("malformed/bad-date.ics").path, sample: false)
        }
    }
}
