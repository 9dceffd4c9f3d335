/// How requests reach Reddit: with a user's OAuth bearer token on the OAuth host, or anonymously
/// on the public host's `.json` pages.
public enum RedditAccess: Sendable, Equatable, CustomStringConvertible {
    /// `Authorization: bearer <token>` on the OAuth host.
    case oauth(token: String)
    /// No token, public host, `.json` paths; writes and the user's own data are refused.
    case anonymous

    /// Never shows the token.
    public var description: String {
        switch self {
        case .oauth: return "oauth(token redacted)"
        case .anonymous: return "anonymous"
        }
    }
}
