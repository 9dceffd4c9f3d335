import Foundation

/// Reads RFC 5545 iCalendar documents into ``Event``s.
///
/// Every line is parsed before any event is built, so an import either returns a complete
/// result or the first ``ICalendarError`` (with its line). Well-formed VEVENTs the service cannot
/// use are listed in ``ICalendarImportResult/skipped`` with a reason. VALARM, VTIMEZONE, VTODO
/// and other components are checked for nesting and otherwise ignored.
///
/// A VEVENT with `RECURRENCE-ID` replaces the occurrence of its series with the same id, or
/// stands alone when the series is not in the document (that is how the exporter writes
/// occurrences). A second VEVENT with the same UID and RECURRENCE-ID is skipped.
public enum ICalendarImporter {
    /// Imports a document given as text.
    /// - Parameters:
    ///   - text: the iCalendar document.
    ///   - options: the expansion range and floating zone.
    /// - Returns: the events and the skipped VEVENTs.
    /// - Throws: ``ICalendarError`` for the first malformed line.
    public static func importEvents(from text: String, options: ICalendarImportOptions) throws(ICalendarError) -> ICalendarImportResult {
        try importEvents(from: Array(text.utf8), options: options)
    }

    /// Imports a document given as bytes (UTF-8, with or without a byte order mark).
    /// - Throws: ``ICalendarError`` for the first malformed line.
    public static func importEvents(from data: Data, options: ICalendarImportOptions) throws(ICalendarError) -> ICalendarImportResult {
        try importEvents(from: [UInt8](data), options: options)
    }

    static func importEvents(from bytes: [UInt8], options: ICalendarImportOptions) throws(ICalendarError) -> ICalendarImportResult {
        let calendars = try ICalendarComponent.calendars(from: try ContentLineParser.parse(bytes))
        var fields: [VEventFields] = []
        for calendar in calendars {
            for component in calendar.components where component.name == "VEVENT" {
                fields.append(try VEventFields.parse(component))
            }
        }
        var slots: [[Event]] = Array(repeating: [], count: fields.count)
        var skipped: [(slot: Int, skip: ICalendarImportSkip)] = []
        var firstLine: [String: Int] = [:]
        var place: [String: (slot: Int, index: Int)] = [:]
        // Series and one-off events first, so occurrences exist before their overrides apply.
        for pass in [false, true] {
            for (slot, event) in fields.enumerated() where (event.recurrenceID != nil) == pass {
                let skip = { (reason: String) in
                    skipped.append((slot, ICalendarImportSkip(line: event.line, uid: event.uid, reason: reason)))
                }
                let built: [Event]
                do {
                    built = try event.events(options: options)
                } catch {
                    skip(error.message)
                    continue
                }
                guard let key = built.first.map({ pass ? $0.id : $0.uid }) ?? event.uid else { continue }
                if let line = firstLine[key] {
                    skip("duplicate UID\(pass ? " and RECURRENCE-ID" : "") (first at line \(line))")
                    continue
                }
                firstLine[key] = event.line
                if pass, let override = built.first, let target = place[override.id] {
                    slots[target.slot][target.index] = override
                    continue
                }
                slots[slot] = built
                for (index, occurrence) in built.enumerated() { place[occurrence.id] = (slot, index) }
            }
        }
        return ICalendarImportResult(
            events: slots.flatMap { $0 }, skipped: skipped.sorted { $0.slot < $1.slot }.map(\.skip))
    }
}
