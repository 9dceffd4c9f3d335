import Foundation
import Testing

@testable import EventCore

struct ICalendarExporterTests {
    static let stamp = Fixture.instant("2025-02-01T08:00:00Z")
    static let from = Fixture.instant("2025-01-01T00:00:00Z")
    static let to = Fixture.instant("2027-01-01T00:00:00Z")

    static func sampleEvents() -> [Event] {
        [
            Event(
                id: "a@x.test", uid: "a@x.test", sequence: 3, title: "Bund light show; fireworks, music \\ 上海外滩灯光秀🎆🎆🎆🎆🎆 一起来看吧",
                description: "Line one\nLine two, with; all\\escapes", categories: ["music", "live-music"],
                startsAt: Fixture.instant("2025-03-01T12:00:00Z"), endsAt: Fixture.instant("2025-03-01T15:00:00Z"),
                timeZone: "Asia/Shanghai", location: EventLocation(name: "JZ Club, 46 Fuxing Road", lat: 31.2105, lon: 121.444),
                url: "https://x.test/e?a=1&b=2", status: .postponed, capacity: 80, likeCount: 5, goingCount: 7, waitlistCount: 1),
            Event(
                id: "b@x.test", uid: "b@x.test", title: "Fair", startsAt: Fixture.instant("2025-09-05T00:00:00Z"),
                endsAt: Fixture.instant("2025-09-08T00:00:00Z"), allDay: true, status: .cancelled),
            Event(
                id: "c@x.test#20250601T090000Z", uid: "c@x.test", recurrenceID: Fixture.instant("2025-06-01T09:00:00Z"), title: "UTC",
                startsAt: Fixture.instant("2025-06-01T09:30:00Z"), endsAt: Fixture.instant("2025-06-01T10:00:00Z"),
                location: EventLocation(name: "", lat: -33.5, lon: 151)),
        ]
    }

    @Test func export_writesCRLFFoldedLinesAndEveryProperty() throws {
        let text = ICalendarExporter.export(Self.sampleEvents(), from: Self.from, to: Self.to, stamp: Self.stamp)
        #expect(text.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//swiftbus//events//EN\r\n"))
        #expect(text.hasSuffix("END:VCALENDAR\r\n"))
        let bytes = Array(text.utf8)
        #expect(bytes.indices.allSatisfy { bytes[$0] != 0x0A || ($0 > 0 && bytes[$0 - 1] == 0x0D) })
        let physical = text.components(separatedBy: "\r\n").dropLast()
        #expect(physical.allSatisfy { $0.utf8.count <= 75 })
        let unfolded = text.replacingOccurrences(of: "\r\n ", with: "")
        for line in [
            "DTSTAMP:20250201T080000Z", "SEQUENCE:3", "DTSTART;TZID=Asia/Shanghai:20250301T200000", "DTEND;TZID=Asia/Shanghai:20250301T230000",
            #"SUMMARY:Bund light show\; fireworks\, music \\ 上海外滩灯光秀🎆🎆🎆🎆🎆 一起来看吧"#,
            #"DESCRIPTION:Line one\nLine two\, with\; all\\escapes"#, #"LOCATION:JZ Club\, 46 Fuxing Road"#, "GEO:31.2105;121.444",
            "CATEGORIES:music,live-music", "URL:https://x.test/e?a=1&b=2", "STATUS:TENTATIVE", "X-SWIFTBUS-STATUS:POSTPONED",
            "X-SWIFTBUS-CAPACITY:80", "DTSTART;VALUE=DATE:20250905", "DTEND;VALUE=DATE:20250908", "STATUS:CANCELLED",
            "RECURRENCE-ID:20250601T090000Z", "DTSTART:20250601T093000Z", "GEO:-33.5;151.0", "STATUS:CONFIRMED",
        ] {
            #expect(unfolded.contains(line + "\r\n"), "missing \(line)")
        }
        #expect(!unfolded.contains("like") && !unfolded.contains("GOING"))
    }

    @Test func export_whenEventsAreOutsideTheRange_leavesThemOut() {
        let events = Self.sampleEvents()
        let text = ICalendarExporter.export(
            events, from: Fixture.instant("2025-03-01T15:00:00Z"), to: Fixture.instant("2025-09-05T00:00:00Z"), stamp: Self.stamp)
        // a ends as the range starts, b starts as it ends: only c overlaps.
        #expect(text.components(separatedBy: "BEGIN:VEVENT").count == 2)
        #expect(text.contains("UID:c@x.test"))
    }

    @Test func export_thenImport_changesNothing() throws {
        let events = Self.sampleEvents().map { event -> Event in
            var copy = event
            (copy.likeCount, copy.goingCount, copy.waitlistCount) = (0, 0, 0)
            return copy
        }
        let text = ICalendarExporter.export(events, from: Self.from, to: Self.to, stamp: Self.stamp)
        let result = try ICalendarImporter.importEvents(from: text, options: Fixture.options)
        #expect(result.skipped.isEmpty)
        #expect(result.events == events)
    }

    @Test(arguments: ["jazz-weekly.ics", "text.ics", "times.ics", "recurring.ics"])
    func export_ofImportedFixture_thenImport_changesNothing(name: String) throws {
        let imported = try Fixture.importFixture(name).events
        let text = ICalendarExporter.export(imported, from: Self.from, to: Self.to, stamp: Self.stamp)
        let again = try ICalendarImporter.importEvents(from: text, options: Fixture.options)
        #expect(again.skipped.isEmpty)
        #expect(again.events == imported)
        #expect(ICalendarExporter.export(again.events, from: Self.from, to: Self.to, stamp: Self.stamp) == text)
    }
}
