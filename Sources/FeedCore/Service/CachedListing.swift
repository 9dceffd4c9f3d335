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
