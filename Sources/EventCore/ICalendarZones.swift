import Foundation

/// How TZID names become zones. A TZID is looked up as an IANA name (RFC 5545 lets a calendar
/// name zones freely, but the IANA names are what real producers write); a leading `/` (the
/// RFC's "globally unique" prefix) is ignored. The VTIMEZONE rules of the document are not
/// read: an event whose TZID is not an IANA name is skipped with a reason rather than placed
/// by a fixed offset that would be wrong on the other side of a DST change.
enum ICalendarZones {
    /// Names of zones that are UTC; events in them are stored with no zone.
    static let utcNames: Set<String> = [
        "UTC", "GMT", "Etc/UTC", "Etc/GMT", "Etc/UCT", "UCT", "Etc/Universal", "Universal", "Etc/Zulu", "Zulu", "GMT0", "Etc/GMT0",
        "Etc/GMT+0", "Etc/GMT-0", "Etc/Greenwich", "Greenwich",
    ]

    static func zone(named tzid: String) -> TimeZone? {
        let name = tzid.hasPrefix("/") ? String(tzid.dropFirst()) : tzid
        guard !name.isEmpty else { return nil }
        return TimeZone(identifier: name)
    }

    /// The `time_zone` to store for a zone: nil for UTC.
    static func storedName(of zone: TimeZone) -> String? {
        utcNames.contains(zone.identifier) ? nil : zone.identifier
    }
}
