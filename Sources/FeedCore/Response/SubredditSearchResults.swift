/// The body of `/api/search_subreddits`.
struct SubredditSearchResults: Decodable {
    var subreddits: [SubredditSearchResult]
}
