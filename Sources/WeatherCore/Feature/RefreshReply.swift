/// The answer to `refresh`: which followed cities got a new forecast and which did not.
public struct RefreshReply: Codable, Sendable, Equatable {
    /// A city whose forecast could not be fetched, and why.
    public struct Failure: Codable, Sendable, Equatable {
        public var id: Int
        public var code: String
        public var message: String
    }

    public var updated: [Int]
    public var failed: [Failure]

    public init(updated: [Int], failed: [Failure]) {
        self.updated = updated
        self.failed = failed
    }
}
