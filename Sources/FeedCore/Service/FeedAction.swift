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
    /// The retry timer after a failed account load fired.
    case accountRetryDue

    case meRequested(RequestID)
    case meLoaded(RequestID, Result<Account, FeedFailure>, at: String)
    case stateRequested(RequestID)

    case listingRequested(RequestID, ListingQuery)
    /// `viewer`: the user signed in when it was asked for, whose votes and saves it carries.
    case listingLoaded(RequestID, ListingQuery, Result<Listing<Post>, FeedFailure>, at: String, viewer: String? = nil)

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
