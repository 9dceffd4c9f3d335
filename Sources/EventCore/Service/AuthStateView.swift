/// What `events` reads of the retained `auth.state` (AuthCore's `AuthSnapshot`):
/// `{"state": "authenticated", "user": "alice", ...}`. Other fields are ignored.
public struct AuthStateView: Decodable, Equatable, Sendable {
    public var state: String
    public var user: String?

    /// Creates a view.
    public init(state: String, user: String?) {
        self.state = state
        self.user = user
    }

    /// The signed-in user: set while the state is `authenticated` or `refreshing` (still
    /// signed in while a new access token is fetched), nil otherwise.
    public var signedInUser: String? {
        state == "authenticated" || state == "refreshing" ? user : nil
    }
}
