/// Everything the feed service knows. `feed.user`, `feed.state` and `feed.listing.<key>` show it
/// (``FeedService/stateTopics``); what only this process knows (requests held while `auth`
/// refreshes, whose account it loaded) is not saved.
public struct FeedState: Codable, Equatable, Sendable {
    /// `auth.state` as last observed; nil until the first value arrives.
    public var auth: AuthView?
    /// `feed.user`: restored at start, loaded on sign-in, cleared on sign-out.
    public var account: FeedAccount = .empty
    /// True while me, the subscriptions and the multis are being fetched.
    public var accountLoading = false
    /// Why the last account load failed (the restored data stays), nil after a success.
    public var accountError: String?
    /// The recent listings by key.
    public var listings: [String: CachedListing] = [:]
    /// Listing keys, most recently fetched first, at most ``FeedFeature/maxListings``.
    public var listingKeys: [String] = []
    /// Votes sent and not answered: the fullname and the `likes` to go back to.
    public var pendingVotes: [String: PendingWrite] = [:]
    /// Saves and unsaves sent and not answered: the fullname and the `saved` to go back to.
    public var pendingSaves: [String: PendingWrite] = [:]
    /// Calls that need the token, held while `auth` refreshes it.
    public var held: [FeedAction] = []
    /// The user whose account this process loaded or is loading; nil: the next `authenticated`
    /// loads it (a restored account is refreshed once per start, as the seed did).
    public var accountSession: String?

    public init() {}

    /// Signed in at `auth`.
    public var isSignedIn: Bool { auth?.isSignedIn == true }

    /// The user whose token Reddit calls carry now (nil: signed out): whose `likes` and `saved`
    /// what Reddit answers carries. Empty when `auth.state` names nobody and no account is loaded.
    public var viewer: String? { isSignedIn ? auth?.user ?? account.user?.name ?? "" : nil }

    enum CodingKeys: String, CodingKey {
        case auth, account, accountLoading, accountError, listings, listingKeys, pendingVotes, pendingSaves
    }
}
