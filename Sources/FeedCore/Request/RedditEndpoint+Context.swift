extension RedditEndpoint {
    /// True when Reddit answers only for a signed-in user: the builder refuses these with
    /// anonymous access, and a redirect from one means the user is signed out.
    public var needsUser: Bool {
        switch self {
        case .me, .mySubscriptions, .myMultis, .vote, .save, .unsave, .subscribe: return true
        case .user(_, let listing, _, _): return listing == .saved
        case .frontPage, .subreddit, .subredditAbout, .search, .searchSubreddits, .comments, .moreChildren, .userAbout: return false
        }
    }

    /// The subreddit the endpoint is about, for errors that concern it.
    var subredditName: String? {
        switch self {
        case .subreddit(let name, _, _), .subredditAbout(let name): return name
        case .search(_, _, _, let subreddit, _): return subreddit
        case .comments(let subreddit, _, _, _, _, _): return subreddit
        case .subscribe(_, let subreddit): return subreddit
        default: return nil
        }
    }

    /// What a 404 means was not found, in words (`r/swift`, `post 1abc1`, `user u/alice`).
    var resource: String? {
        switch self {
        case .subreddit(let name, _, _), .subredditAbout(let name), .subscribe(_, let name): return "r/\(name)"
        case .search(_, _, _, let subreddit, _): return subreddit.map { "r/\($0)" }
        case .comments(let subreddit, let postID, _, let focus, _, _):
            return "post \(postID) in r/\(subreddit)" + (focus.map { " with comment \($0)" } ?? "")
        case .moreChildren(let postID, _, _): return "comments of post \(postID)"
        case .userAbout(let username), .user(let username, _, _, _): return "user u/\(username)"
        case .vote(let fullname, _), .save(let fullname), .unsave(let fullname): return "post or comment \(fullname)"
        case .frontPage, .searchSubreddits, .me, .mySubscriptions, .myMultis: return nil
        }
    }
}
