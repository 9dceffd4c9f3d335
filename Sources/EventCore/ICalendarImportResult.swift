/// What an import gave: the events, and each VEVENT that gave none with the reason.
public struct ICalendarImportResult: Equatable, Sendable {
    /// Events in document order (occurrences of a series in time order, at the series' place).
    public var events: [Event]
    /// VEVENTs left out, in document order.
    public var skipped: [ICalendarImportSkip]

    /// Creates a result.
    public init(events: [Event], skipped: [ICalendarImportSkip]) {
        self.events = events
        self.skipped = skipped
    }
}
