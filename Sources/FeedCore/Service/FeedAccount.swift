/// The signed-in user's data, the value of the retained `feed.user` (the seed's
/// `CurrentUserStore.SaveData`): the account, every subscription sorted by name ignoring case,
/// the custom feeds, and when they were fetched. It never holds a token.
public struct FeedAccount: Codable, Equatable, Sendable {
    /// Nil when nobody is signed in.
    public var user: Account?
    public var subscriptions: [Subreddit]
    public var multis: [LabeledMulti]
    /// ISO 8601, when the data was fetched from Reddit; nil when there is none.
    public var fetchedAt: String?

    public init(user: Account? = nil, subscriptions: [Subreddit] = [], multis: [LabeledMulti] = [], fetchedAt: String? = nil) {
        self.user = user
        self.subscriptions = subscriptions
        self.multis = multis
        self.fetchedAt = fetchedAt
    }

    /// Nobody signed in.
    public static let empty = FeedAccount()

    enum CodingKeys: String, CodingKey {
        case user, subscriptions, multis
        case fetchedAt = "fetched_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(user, forKey: .user)
        try container.encode(subscriptions, forKey: .subscriptions)
        try container.encode(multis, forKey: .multis)
        try container.encode(fetchedAt, forKey: .fetchedAt)
    }
}
