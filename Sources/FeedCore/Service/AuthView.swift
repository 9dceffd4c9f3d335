/// What the feed reads of the retained `auth.state` (see AuthCore's `AuthSnapshot`): the phase
/// and the user. The other fields are ignored.
public struct AuthView: Codable, Equatable, Sendable {
    /// `auth.state`'s `state`, the four states of the seed's `authState`.
    public enum Phase: String, Codable, Sendable {
        case signedOut, signinInProgress, authenticated, refreshing
    }

    public var state: Phase
    public var user: String?

    public init(state: Phase, user: String? = nil) {
        self.state = state
        self.user = user
    }

    /// Signed in: Reddit calls carry the user's token.
    public var isSignedIn: Bool { state == .authenticated || state == .refreshing }
}
