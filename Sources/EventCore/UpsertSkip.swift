/// An imported event the upsert leaves alone, and why.
public struct UpsertSkip: Equatable, Sendable {
    /// The imported event.
    public var event: Event
    /// "sequence 1 is not newer than 2".
    public var reason: String

    /// Creates a skip.
    public init(event: Event, reason: String) {
        self.event = event
        self.reason = reason
    }
}
