import Bus
import ServiceKit

/// The `feed` service on the kit: its state topics, methods and the `auth.state` observation.
///
/// | method | payload | reply |
/// |---|---|---|
/// | `listing` | `{"subreddit"?, "sort"?, "t"?, "after"?, "limit"?}` | ``ListingReply`` |
/// | `comments` | `{"subreddit", "id", "sort"?}` | `{"post", "comments": [{"depth", "thing"}]}` |
/// | `more_comments` | `{"id", "children", "sort"?}` | `{"comments": [{"depth", "thing"}]}` |
/// | `vote` | `{"id", "dir": 1\|0\|-1}` | ``FeedEvent/Voted`` |
/// | `save`, `unsave` | `{"id"}` | ``FeedEvent/Saved`` |
/// | `subscribe` | `{"subreddit", "action": "sub\|unsub"}` | ``FeedEvent/Subscribed`` |
/// | `search` | `{"q", "subreddit"?, "sort"?, "t"?, "after"?, "limit"?}` | `{"posts", "after", "before"}` |
/// | `search_subreddits` | `{"query"}` | `{"subreddits"}` |
/// | `user` | `{"name", "where"?, "after"?}` | `{"user"}` or `{"items", "after", "before"}` |
/// | `me` | `{}` | ``AccountReply`` |
/// | `state` | `{}` | ``FeedSummary`` |
public enum FeedService {
    /// The service name.
    public static let name = "feed"

    /// `feed.user`, `feed.state` (the listings' index, restored before them) and
    /// `feed.listing.<key>`.
    public static let stateTopics: [StateTopic<FeedState>] = [
        .value("feed.user", { $0.account }, restore: { state, saved in state.account = saved }),
        .value("feed.state", { FeedSummary($0) }, restore: { state, saved in state.listingKeys = saved.listings }),
        .family(
            "feed.listing", keys: { $0.listingKeys }, value: { state, key in state.listings[key] },
            restore: { state, key, saved in state.listings[key] = saved }),
    ]

    /// The definition `FeedService/main.swift` runs.
    public static func definition(feature: FeedFeature) -> ServiceDefinition<FeedFeature> {
        var service = ServiceDefinition(name: name, feature: feature, initialState: FeedState())
        for topic in stateTopics { service.state(topic) }
        service.startAction = .started
        service.observe("auth.state", as: AuthView.self) { .authChanged($0.value) }
        service.method("listing") { (id, input: ListingQuery) in .listingRequested(id, input) }
        service.method("comments") { (id, input: FeedInput.Comments) in .commentsRequested(id, input) }
        service.method("more_comments") { (id, input: FeedInput.MoreComments) in .moreCommentsRequested(id, input) }
        service.method("vote") { (id, input: FeedInput.Vote) in .voteRequested(id, input) }
        service.method("save") { (id, input: FeedInput.Thing) in .saveRequested(id, id: input.id, saved: true) }
        service.method("unsave") { (id, input: FeedInput.Thing) in .saveRequested(id, id: input.id, saved: false) }
        service.method("subscribe") { (id, input: FeedInput.Subscribe) in .subscribeRequested(id, input) }
        service.method("search") { (id, input: FeedInput.Search) in .searchRequested(id, input) }
        service.method("search_subreddits") { (id, input: FeedInput.SearchSubreddits) in .searchSubredditsRequested(id, input) }
        service.method("user") { (id, input: FeedInput.User) in .userRequested(id, input) }
        service.method("me") { (id, _: Empty) in .meRequested(id) }
        service.method("state") { (id, _: Empty) in .stateRequested(id) }
        return service
    }
}
