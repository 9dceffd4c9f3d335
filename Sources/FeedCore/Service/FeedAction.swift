import ServiceKit

/// What happens to the feed: requests, `auth.state` changes, and Reddit's answers.
public enum FeedAction: Equatable, Sendable {
    /// Sent once after restore.
    case started
    /// `auth.state` changed (or its current value arrived).
    case authChanged(AuthView)
    /// me, every subscription page and the multis arrived.
    case accountLoaded(FeedAccount)
    case accountLoadFailed(FeedFailure)

    case meRequested(RequestID)
    case meLoaded(RequestID, Result<Account, FeedFailure>, at: String)
    case stateRequested(RequestID)

    case listingRequested(RequestID, ListingQuery)
    case listingLoaded(RequestID, ListingQuery, Result<Listing<Post>, FeedFailure>, at: String)

    case voteRequested(RequestID, FeedInput.Vote)
    case voteFinished(RequestID, FeedInput.Vote, FeedFailure?)
    case saveRequested(RequestID, id: String, saved: Bool)
    case saveFinished(RequestID, id: String, saved: Bool, FeedFailure?)
    case subscribeRequested(RequestID, FeedInput.Subscribe)
    case subscribeFinished(RequestID, FeedInput.Subscribe, Result<Subreddit?, FeedFailure>)

    case commentsRequested(RequestID, FeedInput.Comments)
    case moreCommentsRequested(RequestID, FeedInput.MoreComments)
    case searchRequested(RequestID, FeedInput.Search)
    case searchSubredditsRequested(RequestID, FeedInput.SearchSubreddits)
    case userRequested(RequestID, FeedInput.User)
    /// A pass-through call (comments, search, user) finished.
    case answered(RequestID, Result<FeedAnswer, FeedFailure>)

    /// True for a request that calls Reddit with the user's token when signed in: held while
    /// `auth` refreshes.
    var callsReddit: Bool {
        switch self {
        case .meRequested, .listingRequested, .voteRequested, .saveRequested, .subscribeRequested, .commentsRequested,
            .moreCommentsRequested, .searchRequested, .searchSubredditsRequested, .userRequested:
            return true
        default:
            return false
        }
    }
}

/// The answer of a pass-through call, encoded as its reply.
public enum FeedAnswer: Equatable, Sendable, Encodable {
    case comments(CommentsPage)
    case moreComments([CommentNode])
    case posts(Listing<Post>)
    case subreddits([SubredditSearchResult])
    case account(Account)
    case userContent(Listing<UserContentItem>)

    private enum CodingKeys: String, CodingKey {
        case post, comments, things, posts, after, before, subreddits, user, items
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .comments(let page):
            try container.encode(page.post, forKey: .post)
            try container.encode(page.tree.nodes, forKey: .comments)
        case .moreComments(let nodes):
            try container.encode(nodes, forKey: .comments)
        case .posts(let listing):
            try container.encode(listing.children, forKey: .posts)
            try container.encode(listing.after, forKey: .after)
            try container.encode(listing.before, forKey: .before)
        case .subreddits(let results):
            try container.encode(results, forKey: .subreddits)
        case .account(let account):
            try container.encode(account, forKey: .user)
        case .userContent(let listing):
            try container.encode(listing.children, forKey: .items)
            try container.encode(listing.after, forKey: .after)
            try container.encode(listing.before, forKey: .before)
        }
    }
}
