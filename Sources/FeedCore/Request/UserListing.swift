/// Which of a user's listings to read under `/user/{name}/`.
public enum UserListing: String, Sendable, Equatable, CaseIterable, Codable {
    /// Posts and comments mixed, newest first by default.
    case overview
    case submitted
    case comments
    /// Only the signed-in user's own saved things are readable.
    case saved
}
