import Foundation
import Testing

@testable import EventCore

/// Checks EventCore against Python's icalendar (reads the export) and recurring-ical-events
/// (expands the fixtures' RRULEs). Needs `python3 -m pip install icalendar recurring-ical-events`
/// (Tests/interop/requirements.txt, installed by scripts/deps); each test is disabled with that message when they are missing.
struct ICalendarInteropTests {
    static let hasICalendar = PythonRunner.canImport("icalendar")
    static let hasOracle = PythonRunner.canImport("icalendar", "recurring_ical_events")

    struct Document: Decodable {
        var prodid: String
        var version: String
        var events: [Row]
    }

    struct Row: Decodable, Equatable {
        var uid: String
        var recurrenceID: When?
        var sequence: Int
        var summary: String
        var description: String?
        var location: String?
        var geo: [Double]?
        var categories: [String]
        var url: String?
        var status: String?
        var xStatus: String?
        var capacity: String?
        var dtstamp: When?
        var dtstart: When?
        var dtend: When?

        enum CodingKeys: String, CodingKey {
            case uid, sequence, summary, description, location, geo, categories, url, status, capacity, dtstamp, dtstart, dtend
            case recurrenceID = "recurrence_id"
            case xStatus = "x_status"
        }
    }

    struct When: Decodable, Equatable {
        var utc: String?
        var tzid: String?
        var date: String?
        var floating: String?

        init(utc: String? = nil, tzid: String? = nil, date: String? = nil) {
            self.utc = utc
            self.tzid = tzid
            self.date = date
        }
    }

    struct Occurrence: Decodable, Equatable, CustomStringConvertible {
        var uid: String
        var start: String
        var end: String
        var description: String { "\(uid) \(start)-\(end)" }
    }

    @Test(.enabled(if: hasICalendar, "python3 with the icalendar package is needed: python3 -m pip install icalendar"))
    func export_isReadByPythonICalendar_withEveryField() throws {
        let events = ICalendarExporterTests.sampleEvents()
        let text = ICalendarExporter.export(
            events, from: ICalendarExporterTests.from, to: ICalendarExporterTests.to, stamp: ICalendarExporterTests.stamp)
        let output = try PythonRunner.run([Fixture.url("read_export.py").path], input: Data(text.utf8))
        try #require(output.status == 0, "read_export.py failed: \(output.stderr)")
        let document = try JSONDecoder().decode(Document.self, from: output.stdout)
        #expect(document.version == "2.0")
        #expect(document.prodid == ICalendarExporter.defaultProductID)
        let stamp = When(utc: "2025-02-01T08:00:00Z")
        #expect(
            document.events == [
                Row(
                    uid: "a@x.test", recurrenceID: nil, sequence: 3, summary: events[0].title, description: events[0].description,
                    location: "JZ Club, 46 Fuxing Road", geo: [31.2105, 121.444], categories: ["music", "live-music"],
                    url: "https://x.test/e?a=1&b=2", status: "TENTATIVE", xStatus: "POSTPONED", capacity: "80", dtstamp: stamp,
                    dtstart: When(utc: "2025-03-01T12:00:00Z", tzid: "Asia/Shanghai"), dtend: When(utc: "2025-03-01T15:00:00Z", tzid: "Asia/Shanghai")
                ),
                Row(
                    uid: "b@x.test", recurrenceID: nil, sequence: 0, summary: "Fair", description: nil, location: nil, geo: nil, categories: [],
                    url: nil, status: "CANCELLED", xStatus: nil, capacity: nil, dtstamp: stamp, dtstart: When(date: "2025-09-05"),
                    dtend: When(date: "2025-09-08")),
                Row(
                    uid: "c@x.test", recurrenceID: When(utc: "2025-06-01T09:00:00Z"), sequence: 0, summary: "UTC", description: nil, location: "",
                    geo: [-33.5, 151], categories: [], url: nil, status: "CONFIRMED", xStatus: nil, capacity: nil, dtstamp: stamp,
                    dtstart: When(utc: "2025-06-01T09:30:00Z"), dtend: When(utc: "2025-06-01T10:00:00Z")),
            ])
    }

    @Test(.enabled(if: hasICalendar, "python3 with the icalendar package is needed: python3 -m pip install icalendar"))
    func exportOfRecurringFixture_isReadByPythonICalendar_withTheSameInstants() throws {
        let events = try Fixture.importFixture("recurring.ics").events
        let text = ICalendarExporter.export(
            events, from: ICalendarExporterTests.from, to: ICalendarExporterTests.to, stamp: ICalendarExporterTests.stamp)
        let output = try PythonRunner.run([Fixture.url("read_export.py").path], input: Data(text.utf8))
        try #require(output.status == 0, "read_export.py failed: \(output.stderr)")
        let rows = try JSONDecoder().decode(Document.self, from: output.stdout).events
        #expect(rows.count == events.count)
        for (row, event) in zip(rows, events) {
            let start =
                event.allDay
                ? When(date: String(Fixture.iso(event.startsAt).prefix(10))) : When(utc: Fixture.iso(event.startsAt), tzid: event.timeZone)
            #expect(row.uid == event.uid)
            #expect(row.dtstart == start, "\(event.id)")
        }
    }

    @Test(
        .enabled(if: hasOracle, "python3 with icalendar and recurring-ical-events is needed: python3 -m pip install icalendar recurring-ical-events"),
        arguments: [
            ("recurring.ics", "2025-01-01T00:00:00Z", "2027-01-01T00:00:00Z"), ("recurring.ics", "2025-03-05T01:00:00Z", "2025-04-20T00:00:00Z"),
            ("jazz-weekly.ics", "2025-03-08T13:00:00Z", "2025-03-22T12:00:00Z"),
        ])
    func expansion_matchesRecurringICalEvents(name: String, from: String, to: String) throws {
        let output = try PythonRunner.run([Fixture.url("expand_oracle.py").path, Fixture.url(name).path, from, to], input: Data())
        try #require(output.status == 0, "expand_oracle.py failed: \(output.stderr)")
        let expected = try JSONDecoder().decode([Occurrence].self, from: output.stdout)
        let options = ICalendarImportOptions(expansionRange: Fixture.instant(from)..<Fixture.instant(to))
        let ours = try Fixture.importFixture(name, options: options).events.map { event in
            let format = { (date: Date) in event.allDay ? String(Fixture.iso(date).prefix(10)) : Fixture.iso(date) }
            return Occurrence(uid: event.uid, start: format(event.startsAt), end: format(event.endsAt))
        }
        #expect(!expected.isEmpty)
        #expect(ours.sorted { ($0.uid, $0.start) < ($1.uid, $1.start) } == expected)
    }
}
