/// The `dir` of `/api/vote`: up, no vote (clears a vote), down.
public enum VoteDirection: Int, Sendable, Equatable, CaseIterable, Codable {
    case up = 1
    case none = 0
    case down = -1

    /// The `likes` a thing shows after this vote: true, nil or false.
    public var likes: Bool? {
        switch self {
        case .up: return true
        case .none: return nil
        case .down: return false
        }
    }
}
