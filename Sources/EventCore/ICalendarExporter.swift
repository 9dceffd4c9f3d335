import Foundation

/// Writes ``Event``s as an RFC 5545 iCalendar document.
///
/// Lines end in CRLF and fold at 75 octets. A timed event with a `time_zone` is written with
/// `TZID=<IANA name>` and no VTIMEZONE: the importer here, Python's icalendar and the common
/// calendar apps resolve IANA names themselves, and VTIMEZONE rules would be a second, stale
/// copy of the tz database. Events without a zone are written in UTC (`Z`), all-day events as
/// `VALUE=DATE` with an exclusive DTEND. An occurrence of a series is written as its own VEVENT
/// with the series' UID and a `RECURRENCE-ID`, not as an RRULE, so every occurrence keeps its
/// own status and changes. Counts (likes, going, waitlist) are not written.
public enum ICalendarExporter {
    /// The PRODID written when the caller gives none.
    public static let defaultProductID = "-//swiftbus//events//EN"

    /// Exports the events that overlap `[from, to)` (an event without duration when it starts
    /// inside), in the order given.
    /// - Parameters:
    ///   - events: the events to choose from.
    ///   - from: the start of the range.
    ///   - to: the end of the range (exclusive).
    ///   - stamp: the DTSTAMP of every VEVENT (when the document is made).
    ///   - productID: the PRODID of the calendar.
    /// - Returns: the document, CRLF line endings.
    public static func export(
        _ events: [Event], from: Date, to: Date, stamp: Date, productID: String = defaultProductID
    ) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:" + ICalendarText.escape(productID), "CALSCALE:GREGORIAN"]
        for event in events where event.overlaps(from: from, to: to) {
            lines += vevent(event, stamp: stamp)
        }
        lines.append("END:VCALENDAR")
        return lines.map(ContentLineFolder.fold).joined()
    }

    static func vevent(_ event: Event, stamp: Date) -> [String] {
        var lines = ["BEGIN:VEVENT", "UID:" + event.uid, "DTSTAMP:" + CivilDateTime(utc: stamp).basicFormat + "Z"]
        lines.append("SEQUENCE:\(event.sequence)")
        if let recurrenceID = event.recurrenceID { lines.append(timeProperty("RECURRENCE-ID", recurrenceID, of: event)) }
        lines.append(timeProperty("DTSTART", event.startsAt, of: event))
        lines.append(timeProperty("DTEND", event.endsAt, of: event))
        lines.append("SUMMARY:" + ICalendarText.escape(event.title))
        if let description = event.description { lines.append("DESCRIPTION:" + ICalendarText.escape(description)) }
        if let location = event.location {
            lines.append("LOCATION:" + ICalendarText.escape(location.name))
            if let lat = location.lat, let lon = location.lon { lines.append("GEO:\(lat);\(lon)") }
        }
        if !event.categories.isEmpty {
            lines.append("CATEGORIES:" + event.categories.map(ICalendarText.escape).joined(separator: ","))
        }
        if let url = event.url { lines.append("URL:" + url) }
        switch event.status {
        case .scheduled: lines.append("STATUS:CONFIRMED")
        case .cancelled: lines.append("STATUS:CANCELLED")
        case .postponed: lines += ["STATUS:TENTATIVE", "X-SWIFTBUS-STATUS:POSTPONED"]
        }
        if let capacity = event.capacity { lines.append("X-SWIFTBUS-CAPACITY:\(capacity)") }
        lines.append("END:VEVENT")
        return lines
    }

    /// `NAME;VALUE=DATE:yyyyMMdd`, `NAME;TZID=zone:yyyyMMddTHHmmss` or `NAME:yyyyMMddTHHmmssZ`.
    static func timeProperty(_ name: String, _ instant: Date, of event: Event) -> String {
        if event.allDay {
            return name + ";VALUE=DATE:" + CivilDateTime(utc: instant).date.basicFormat
        }
        if let zoneName = event.timeZone, let zone = ICalendarZones.zone(named: zoneName) {
            return name + ";TZID=" + parameterValue(zoneName) + ":" + CivilDateTime(instant: instant, in: zone).basicFormat
        }
        return name + ":" + CivilDateTime(utc: instant).basicFormat + "Z"
    }

    /// A parameter value, quoted when it holds `;`, `:` or `,`.
    static func parameterValue(_ value: String) -> String {
        let clean = value.replacingOccurrences(of: "\"", with: "")
        return clean.contains(where: { ";:,".contains($0) }) ? "\"" + clean + "\"" : clean
    }
}
