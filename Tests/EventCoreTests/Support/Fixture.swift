import Foundation

@testable import EventCore

/// The .ics files under Tests/EventCoreTests/Fixtures and shared test values.
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }

    /// 2025 and 2026, wide enough for every fixture's series.
    static let options = ICalendarImportOptions(expansionRange: instant("2025-01-01T00:00:00Z")..<instant("2027-01-01T00:00:00Z"))

    static func importFixture(_ name: String, options: ICalendarImportOptions = options) throws -> ICalendarImportResult {
        try ICalendarImporter.importEvents(from: data(name), options: options)
    }

    static func importText(_ lines: [String], options: ICalendarImportOptions = options) throws(ICalendarError) -> ICalendarImportResult {
        try ICalendarImporter.importEvents(from: lines.joined(separator: "\r\n") + "\r\n", options: options)
    }

    /// A VCALENDAR around VEVENT lines.
    static func calendar(_ eventLines: [String]) -> [String] {
        ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN"] + eventLines + ["END:VCALENDAR"]
    }

    /// A UTC instant from `2025-03-01T12:00:00Z`.
    static func instant(_ text: String) -> Date {
        guard let civil = CivilDateTime(isoFormat: text) else { fatalError("bad test instant \(text)") }
        return civil.utcInstant
    }

    /// The JSON form of an instant, for readable expectations.
    static func iso(_ date: Date) -> String { Event.isoString(date) }
}
