/// The answer to `refresh`: which followed cities got a new forecast and which did not.
public struct RefreshReply: Codable, Sendable, Equatable {
    /// A city whose forecast could not be fetched, and why.
    public struct Failure: Codable, Sendable, Equatable {
        /// The city.
        public var id: Int
        /// The error code (`upstream_unreachable`, `timeout`, `rate_limited` ...).
        public var code: String
        /// What went wrong, for people.
        public var message: String
    }

    /// The cities whose forecast was fetched anew, in followed order.
    public var updated: [Int]
    /// The cities whose fetch failed (their stored forecast, if any, is now marked stale).
    public var failed: [Failure]

    public init(updated: [Int], failed: [Failure]) {
        self.updated = updated
        self.failed = failed
    }
}
