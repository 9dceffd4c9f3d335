import Foundation

extension RedditAPI {
    /// `/api/v1/me`.
    public func me() async throws(FeedFailure) -> Account {
        try await decode(.me, signedIn: true) { response throws(RedditError) in try response.account(for: .me) }
    }

    /// Every page of the user's subscriptions (following `after`), sorted by name ignoring case.
    public func allSubscriptions() async throws(FeedFailure) -> [Subreddit] {
        var collector = SubscriptionCollector()
        var next = collector.nextEndpoint
        while let endpoint = next {
            let page = try await decode(endpoint, signedIn: true) { response throws(RedditError) in
                try response.subscriptionsPage(for: endpoint)
            }
            do {
                next = try collector.add(page)
            } catch {
                throw .reddit(error)
            }
        }
        return collector.subscriptions
    }

    /// `/api/multi/mine`.
    public func multis() async throws(FeedFailure) -> [LabeledMulti] {
        try await decode(.myMultis, signedIn: true) { response throws(RedditError) in try response.multis(for: .myMultis) }
    }

    /// A listing of posts (front page, subreddit, search).
    public func posts(_ endpoint: RedditEndpoint, signedIn: Bool) async throws(FeedFailure) -> Listing<Post> {
        try await decode(endpoint, signedIn: signedIn) { response throws(RedditError) in try response.listing(of: Post.self, for: endpoint) }
    }

    /// A post and its comment tree.
    public func comments(_ endpoint: RedditEndpoint, signedIn: Bool) async throws(FeedFailure) -> CommentsPage {
        try await decode(endpoint, signedIn: signedIn) { response throws(RedditError) in try response.commentsPage(for: endpoint) }
    }

    /// The comments a `more` stub stands for.
    public func moreChildren(_ endpoint: RedditEndpoint, signedIn: Bool) async throws(FeedFailure) -> [CommentTreeItem] {
        try await decode(endpoint, signedIn: signedIn) { response throws(RedditError) in try response.moreChildren(for: endpoint) }
    }

    /// A write (vote, save, unsave, subscribe), which needs the user.
    public func write(_ endpoint: RedditEndpoint) async throws(FeedFailure) {
        try await decode(endpoint, signedIn: true) { response throws(RedditError) in try response.acknowledgement(for: endpoint) }
    }

    /// A subreddit's `about`.
    public func subredditAbout(_ name: String, signedIn: Bool) async throws(FeedFailure) -> Subreddit {
        let endpoint = RedditEndpoint.subredditAbout(name: name)
        return try await decode(endpoint, signedIn: signedIn) { response throws(RedditError) in try response.subredditAbout(for: endpoint) }
    }

    /// `/api/search_subreddits`.
    public func searchSubreddits(_ query: String, signedIn: Bool) async throws(FeedFailure) -> [SubredditSearchResult] {
        let endpoint = RedditEndpoint.searchSubreddits(query: query)
        return try await decode(endpoint, signedIn: signedIn) { response throws(RedditError) in try response.subredditSearch(for: endpoint) }
    }

    /// A user's profile.
    public func userAbout(_ name: String, signedIn: Bool) async throws(FeedFailure) -> Account {
        let endpoint = RedditEndpoint.userAbout(username: name)
        return try await decode(endpoint, signedIn: signedIn) { response throws(RedditError) in try response.account(for: endpoint) }
    }

    /// A user's overview, submitted, comments or saved listing.
    public func userContent(_ endpoint: RedditEndpoint, signedIn: Bool) async throws(FeedFailure) -> Listing<UserContentItem> {
        try await decode(endpoint, signedIn: signedIn) { response throws(RedditError) in
            try response.listing(of: UserContentItem.self, for: endpoint)
        }
    }

    private func decode<T>(
        _ endpoint: RedditEndpoint, signedIn: Bool, _ read: (RedditResponse) throws(RedditError) -> T
    ) async throws(FeedFailure) -> T {
        let response = try await response(endpoint, signedIn: signedIn)
        do {
            return try read(response)
        } catch {
            throw .reddit(error)
        }
    }
}
