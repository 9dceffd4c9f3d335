/// A listing as the feed keeps it on `feed.listing.<key>` and serves it: the query, the posts,
/// Reddit's cursors, when it was fetched and for whom.
public struct CachedListing: Codable, Equatable, Sendable {
    public var key: String
    public var query: ListingQuery
    public var posts: [Post]
    /// The cursor of the next page.
    public var after: String?
    public var before: String?
    /// ISO 8601.
    public var fetchedAt: String
    /// The Reddit user whose token fetched it: the posts' `likes` and `saved` are that user's.
    /// Nil: fetched signed out, or those fields were cleared.
    public var viewer: String?

    public init(key: String, query: ListingQuery, posts: [Post], after: String?, before: String?, fetchedAt: String, viewer: String? = nil) {
        self.key = key
        self.query = query
        self.posts = posts
        self.after = after
        self.before = before
        self.fetchedAt = fetchedAt
        self.viewer = viewer
    }

    enum CodingKeys: String, CodingKey {
        case key, query, posts, after, before, viewer
        case fetchedAt = "fetched_at"
    }

    /// The listing as `viewer` (nil: nobody signed in) may see it: unchanged when it was fetched
    /// for them or signed out; else nil for a front page, which a token makes of its user's
    /// subscriptions, and for any other the posts without the previous user's votes and saves.
    public func shown(to viewer: String?) -> CachedListing? {
        guard let owner = self.viewer, owner != viewer else { return self }
        return query.subreddit == nil ? nil : withoutUserFields()
    }

    /// The posts with no vote and not saved, fetched for nobody.
    public func withoutUserFields() -> CachedListing {
        var copy = self
        copy.viewer = nil
        for index in copy.posts.indices {
            copy.posts[index].likes = nil
            copy.posts[index].saved = false
        }
        return copy
    }
}
