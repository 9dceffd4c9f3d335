/// The value of the retained `feed.state` and of the `state` method: where the feed stands, and
/// the index of the cached listings (`feed.listing.<key>`), which restores them.
public struct FeedSummary: Codable, Equatable, Sendable {
    /// `auth.state`'s phase as last seen; nil before the first value.
    public var auth: AuthView.Phase?
    /// The signed-in user's name as `feed.user` has it.
    public var user: String?
    public var subscriptions: Int
    public var accountLoading: Bool
    public var accountError: String?
    /// The cached listings' keys, most recent first.
    public var listings: [String]

    public init(
        auth: AuthView.Phase?, user: String?, subscriptions: Int, accountLoading: Bool, accountError: String?, listings: [String]
    ) {
        self.auth = auth
        self.user = user
        self.subscriptions = subscriptions
        self.accountLoading = accountLoading
        self.accountError = accountError
        self.listings = listings
    }

    public init(_ state: FeedState) {
        self.init(
            auth: state.auth?.state, user: state.account.user?.name, subscriptions: state.account.subscriptions.count,
            accountLoading: state.accountLoading, accountError: state.accountError, listings: state.listingKeys)
    }

    enum CodingKeys: String, CodingKey {
        case auth, user, subscriptions, listings
        case accountLoading = "account_loading"
        case accountError = "account_error"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(auth, forKey: .auth)
        try container.encode(user, forKey: .user)
        try container.encode(subscriptions, forKey: .subscriptions)
        try container.encode(accountLoading, forKey: .accountLoading)
        try container.encode(accountError, forKey: .accountError)
        try container.encode(listings, forKey: .listings)
    }
}
