/// Every Reddit call the feed service makes. Values hold the caller's input unvalidated;
/// ``RedditRequestBuilder`` validates and encodes it when it builds the request.
public enum RedditEndpoint: Sendable, Equatable {
    /// The front page (`/hot`, `/top?t=week`, ...); the signed-in user's subscriptions, or
    /// Reddit's defaults when signed out.
    case frontPage(sort: ListingSort, page: PageRequest = PageRequest())
    /// A subreddit's posts (`/r/{name}/{sort}`); `name` may join several with `+`.
    case subreddit(name: String, sort: ListingSort, page: PageRequest = PageRequest())
    /// A subreddit's description (`/r/{name}/about`).
    case subredditAbout(name: String)
    /// Post search (`/search`), or within one subreddit (`/r/{name}/search?restrict_sr=1`).
    case search(query: String, sort: SearchSort? = nil, time: TimeRange? = nil, subreddit: String? = nil, page: PageRequest = PageRequest())
    /// Subreddits whose names start with `query` (`POST /api/search_subreddits`).
    case searchSubreddits(query: String)
    /// A post and its comment tree (`/r/{subreddit}/comments/{postID}`). `focusCommentID` loads
    /// the thread under one comment, which is how a "continue this thread" stub is expanded;
    /// `limit` caps the number of comments and `depth` the levels.
    case comments(
        subreddit: String, postID: String, sort: CommentSort? = nil, focusCommentID: String? = nil, depth: Int? = nil,
        limit: Int? = nil)
    /// The comments a `more` stub stands for (`/api/morechildren`), at most 100 ids per call.
    case moreChildren(postID: String, children: [String], sort: CommentSort? = nil)
    /// The signed-in account (`/api/v1/me`).
    case me
    /// One page of the signed-in user's subscriptions, 100 at a time.
    case mySubscriptions(after: String? = nil)
    /// The signed-in user's custom feeds (`/api/multi/mine`).
    case myMultis
    /// Votes on a post (`t3_`) or a comment (`t1_`).
    case vote(fullname: String, direction: VoteDirection)
    /// Saves a post or comment.
    case save(fullname: String)
    /// Removes a post or comment from the saved list.
    case unsave(fullname: String)
    /// Subscribes to or leaves a subreddit by name.
    case subscribe(action: SubscribeAction, subreddit: String)
    /// A user's profile (`/user/{name}/about`).
    case userAbout(username: String)
    /// A user's overview, submitted posts, comments or saved things; `sort` takes hot, new, top or
    /// controversial.
    case user(username: String, listing: UserListing, sort: ListingSort? = nil, page: PageRequest = PageRequest())
}
