/// The value a thing goes back to when an optimistic write fails.
public struct PendingWrite: Codable, Equatable, Sendable {
    /// The `likes` (vote) or `saved` (save) before the write.
    public var previous: Bool?

    public init(previous: Bool?) { self.previous = previous }
}
