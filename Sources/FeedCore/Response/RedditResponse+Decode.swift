import Foundation

extension RedditResponse {
    /// Decodes the body as `type` once ``failure(for:)`` finds nothing wrong.
    /// - Throws: The ``RedditError`` of a failed answer, or ``RedditError/invalidResponse(status:excerpt:)``
    ///   when the body is not the expected JSON (an HTML page, a changed shape).
    public func decode<T: Decodable>(_ type: T.Type, for endpoint: RedditEndpoint?) throws(RedditError) -> T {
        if let failure = failure(for: endpoint) { throw failure }
        return try decodeBody(type)
    }

    /// A listing of posts, subreddits, comments or mixed user content.
    public func listing<Item>(of item: Item.Type = Item.self, for endpoint: RedditEndpoint?) throws(RedditError) -> Listing<Item> {
        try decode(Listing<Item>.self, for: endpoint)
    }

    /// A subreddit's `about`. An unknown subreddit comes back as an empty listing instead of a
    /// `t5`, and that is reported as ``RedditError/unknownSubreddit(_:)``.
    public func subredditAbout(for endpoint: RedditEndpoint?) throws(RedditError) -> Subreddit {
        if let failure = failure(for: endpoint) { throw failure }
        if let listing = try? JSONDecoder().decode(Listing<Subreddit>.self, from: body) {
            guard let subreddit = listing.children.first else { throw .unknownSubreddit(endpoint?.subredditName) }
            return subreddit
        }
        return try decodeBody(Thing<Subreddit>.self).item
    }

    /// The post and comment tree of the comments endpoint: `[postListing, commentListing]`.
    public func commentsPage(for endpoint: RedditEndpoint?) throws(RedditError) -> CommentsPage {
        let pair = try decode(CommentsPair.self, for: endpoint)
        guard let post = pair.post.children.first else {
            throw .invalidResponse(status: status, excerpt: "comments answer without a post: \(excerpt())")
        }
        return CommentsPage(post: post, tree: CommentTree(pair.comments))
    }

    /// The flat list of `/api/morechildren`, in Reddit's order; ``CommentTree/expand(_:requested:with:)``
    /// rebuilds it into the tree.
    public func moreChildren(for endpoint: RedditEndpoint?) throws(RedditError) -> [CommentTreeItem] {
        let envelope = try decode(APIEnvelope<MoreChildrenData>.self, for: endpoint)
        return envelope.json.data?.things ?? []
    }

    /// The account of `/api/v1/me` (bare) or `/user/{name}/about` (wrapped as a `t2`).
    public func account(for endpoint: RedditEndpoint?) throws(RedditError) -> Account {
        if case .me = endpoint { return try decode(Account.self, for: endpoint) }
        return try decode(Thing<Account>.self, for: endpoint).item
    }

    /// One page of the signed-in user's subscriptions. Signed out, Reddit redirects and then
    /// answers the JSON string `"{}"`; both are ``RedditError/signInRequired``.
    public func subscriptionsPage(for endpoint: RedditEndpoint?) throws(RedditError) -> Listing<Subreddit> {
        if let failure = failure(for: endpoint) { throw failure }
        if (try? JSONDecoder().decode(String.self, from: body)) != nil { throw .signInRequired }
        return try decodeBody(Listing<Subreddit>.self)
    }

    /// The custom feeds of `/api/multi/mine`.
    public func multis(for endpoint: RedditEndpoint?) throws(RedditError) -> [LabeledMulti] {
        try decode([Thing<LabeledMulti>].self, for: endpoint).map(\.item)
    }

    /// The matches of `/api/search_subreddits`.
    public func subredditSearch(for endpoint: RedditEndpoint?) throws(RedditError) -> [SubredditSearchResult] {
        try decode(SubredditSearchResults.self, for: endpoint).subreddits
    }

    /// Checks the answer of a write (vote, save, unsave, subscribe): `{}` on success.
    /// - Throws: ``RedditError/apiErrors(_:)`` for a refused write answered with a 200, or the
    ///   error of a failed answer; ``RedditError/invalidResponse(status:excerpt:)`` for a body
    ///   that is not a JSON object.
    public func acknowledgement(for endpoint: RedditEndpoint?) throws(RedditError) {
        _ = try decode(EmptyPayload.self, for: endpoint)
    }

    private func decodeBody<T: Decodable>(_ type: T.Type) throws(RedditError) -> T {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            throw .invalidResponse(status: status, excerpt: "\(Self.describe(error)): \(excerpt(limit: 80))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing '\(key.stringValue)' at '\(path(context))'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at '\(path(context))'"
        case DecodingError.dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "\(context.debugDescription) at '\(path(context))'"
        default:
            return "undecodable"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
