import Foundation

/// How the importer places and expands events.
public struct ICalendarImportOptions: Sendable {
    /// Occurrences of recurring events are expanded where they overlap this range. One-off
    /// events are imported wherever they are.
    public var expansionRange: Range<Date>
    /// The zone floating times (no `Z`, no `TZID`) are read in; stored as the event's
    /// `time_zone` unless it is UTC. All-day dates always float (see ``Event``).
    public var floatingTimeZone: TimeZone

    /// Creates options.
    /// - Parameters:
    ///   - expansionRange: where to expand recurring events.
    ///   - floatingTimeZone: the zone of floating times; UTC by default.
    public init(expansionRange: Range<Date>, floatingTimeZone: TimeZone = TimeZone(identifier: "UTC")!) {
        self.expansionRange = expansionRange
        self.floatingTimeZone = floatingTimeZone
    }
}
