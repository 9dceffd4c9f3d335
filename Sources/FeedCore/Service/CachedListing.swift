/// A listing as the feed keeps it on `feed.listing.<key>` and serves it: the query, the posts,
/// Reddit's cursors and when it was fetched.
public struct CachedListing: Codable, Equatable, Sendable {
    public var key: String
    public var query: ListingQuery
    public var posts: [Post]
    /// The cursor of the next page.
    public var after: String?
    public var before: String?
    /// ISO 8601.
    public var fetchedAt: String

    public init(key: String, query: ListingQuery, posts: [Post], after: String?, before: String?, fetchedAt: String) {
        self.key = key
        self.query = query
        self.posts = posts
        self.after = after
        self.before = before
        self.fetchedAt = fetchedAt
    }

    enum CodingKeys: String, CodingKey {
        case key, query, posts, after, before
        case fetchedAt = "fetched_at"
    }
}

/// The answer of `listing`: the cached listing and whether it is stale (served from the store
/// because Reddit could not be reached).
public struct ListingReply: Codable, Equatable, Sendable {
    public var listing: CachedListing
    public var stale: Bool

    public init(listing: CachedListing, stale: Bool) {
        self.listing = listing
        self.stale = stale
    }

    enum CodingKeys: String, CodingKey {
        case key, query, posts, after, before, stale
        case fetchedAt = "fetched_at"
    }

    public init(from decoder: any Decoder) throws {
        listing = try CachedListing(from: decoder)
        stale = try decoder.container(keyedBy: CodingKeys.self).decode(Bool.self, forKey: .stale)
    }

    public func encode(to encoder: any Encoder) throws {
        try listing.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(stale, forKey: .stale)
    }
}

/// The answer of `me`: `feed.user`'s value and whether it is stale.
public struct AccountReply: Codable, Equatable, Sendable {
    public var account: FeedAccount
    public var stale: Bool

    public init(account: FeedAccount, stale: Bool) {
        self.account = account
        self.stale = stale
    }

    enum CodingKeys: String, CodingKey { case stale }

    public init(from decoder: any Decoder) throws {
        account = try FeedAccount(from: decoder)
        stale = try decoder.container(keyedBy: CodingKeys.self).decode(Bool.self, forKey: .stale)
    }

    public func encode(to encoder: any Encoder) throws {
        try account.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(stale, forKey: .stale)
    }
}
