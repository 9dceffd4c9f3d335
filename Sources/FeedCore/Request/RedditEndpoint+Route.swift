extension RedditEndpoint {
    /// The largest number of ids `/api/morechildren` takes in one call.
    public static let moreChildrenBatch = 100

    /// Validates the endpoint's input and resolves it to a method, a path, query and form fields.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)`` naming the first bad value.
    func route() throws(RedditError) -> RedditRoute {
        switch self {
        case .frontPage(let sort, let page):
            return RedditRoute(method: .get, segments: [sort.name], query: Self.timeField(sort) + (try page.fields()))
        case .subreddit(let name, let sort, let page):
            // A subreddit has no separate "best": Reddit serves its hot listing for it.
            let path = sort == .best ? "hot" : sort.name
            return RedditRoute(
                method: .get, segments: ["r", try RedditNames.subreddit(name), path], query: Self.timeField(sort) + (try page.fields()))
        case .subredditAbout(let name):
            return RedditRoute(method: .get, segments: ["r", try RedditNames.singleSubreddit(name), "about"])
        case .search(let query, let sort, let time, let subreddit, let page):
            var fields = [("q", try RedditNames.query(query))]
            if let sort { fields.append(("sort", sort.rawValue)) }
            if let time { fields.append(("t", time.rawValue)) }
            var segments = ["search"]
            if let subreddit {
                segments = ["r", try RedditNames.subreddit(subreddit), "search"]
                fields.append(("restrict_sr", "1"))
            }
            return RedditRoute(method: .get, segments: segments, query: fields + (try page.fields()))
        case .searchSubreddits(let query):
            return RedditRoute(
                method: .post, segments: ["api", "search_subreddits"], form: [("query", try RedditNames.query(query, field: "query"))])
        case .comments(let subreddit, let postID, let sort, let focus, let depth, let limit):
            return try Self.commentsRoute(subreddit: subreddit, postID: postID, sort: sort, focus: focus, depth: depth, limit: limit)
        case .moreChildren(let postID, let children, let sort):
            return try Self.moreChildrenRoute(postID: postID, children: children, sort: sort)
        case .me:
            return RedditRoute(method: .get, segments: ["api", "v1", "me"])
        case .mySubscriptions(let after):
            let page = PageRequest(limit: PageRequest.maximumLimit, after: after)
            return RedditRoute(method: .get, segments: ["subreddits", "mine", "subscriber"], query: try page.fields())
        case .myMultis:
            return RedditRoute(method: .get, segments: ["api", "multi", "mine"])
        case .vote(let fullname, let direction):
            let id = try RedditNames.fullname(fullname, kinds: ["t1", "t3"])
            return RedditRoute(method: .post, segments: ["api", "vote"], form: [("id", id), ("dir", String(direction.rawValue))])
        case .save(let fullname):
            let id = try RedditNames.fullname(fullname, kinds: ["t1", "t3"])
            return RedditRoute(method: .post, segments: ["api", "save"], form: [("id", id)])
        case .unsave(let fullname):
            let id = try RedditNames.fullname(fullname, kinds: ["t1", "t3"])
            return RedditRoute(method: .post, segments: ["api", "unsave"], form: [("id", id)])
        case .subscribe(let action, let subreddit):
            let name = try RedditNames.singleSubreddit(subreddit, field: "sr_name")
            return RedditRoute(
                method: .post, segments: ["api", "subscribe"], form: [("action", action.rawValue), ("sr_name", name)])
        case .userAbout(let username):
            return RedditRoute(method: .get, segments: ["user", try RedditNames.username(username), "about"])
        case .user(let username, let listing, let sort, let page):
            var fields: [(String, String)] = []
            if let sort {
                guard [ListingSort.hot, .new].contains(sort) || sort.timeRange != nil else {
                    throw .invalidInput(field: "sort", value: sort.name, rule: "a user's listings sort by hot, new, top or controversial")
                }
                fields = [("sort", sort.name)] + Self.timeField(sort)
            }
            return RedditRoute(
                method: .get, segments: ["user", try RedditNames.username(username), listing.rawValue], query: fields + (try page.fields()))
        }
    }

    private static func timeField(_ sort: ListingSort) -> [(String, String)] {
        sort.timeRange.map { [("t", $0.rawValue)] } ?? []
    }

    private static func commentsRoute(
        subreddit: String, postID: String, sort: CommentSort?, focus: String?, depth: Int?, limit: Int?
    ) throws(RedditError) -> RedditRoute {
        let id = try RedditNames.bareID(postID, kind: "t3", field: "post")
        var fields: [(String, String)] = []
        if let sort { fields.append(("sort", sort.rawValue)) }
        if let focus { fields.append(("comment", try RedditNames.bareID(focus, kind: "t1", field: "comment"))) }
        if let depth {
            guard depth >= 1 else { throw .invalidInput(field: "depth", value: String(depth), rule: "at least 1") }
            fields.append(("depth", String(depth)))
        }
        if let limit {
            guard limit >= 1 else { throw .invalidInput(field: "limit", value: String(limit), rule: "at least 1") }
            fields.append(("limit", String(limit)))
        }
        return RedditRoute(method: .get, segments: ["r", try RedditNames.singleSubreddit(subreddit), "comments", id], query: fields)
    }

    private static func moreChildrenRoute(postID: String, children: [String], sort: CommentSort?) throws(RedditError) -> RedditRoute {
        let link = try RedditNames.bareID(postID, kind: "t3", field: "link_id")
        guard (1...moreChildrenBatch).contains(children.count) else {
            throw .invalidInput(
                field: "children", value: String(children.count),
                rule: "1 to \(moreChildrenBatch) comment ids (a \"continue this thread\" stub has none: load its parent's thread instead)")
        }
        var ids: [String] = []
        for child in children { ids.append(try RedditNames.bareID(child, kind: "t1", field: "children")) }
        var fields = [("api_type", "json"), ("link_id", "t3_" + link), ("children", ids.joined(separator: ","))]
        if let sort { fields.append(("sort", sort.rawValue)) }
        return RedditRoute(method: .get, segments: ["api", "morechildren"], query: fields)
    }
}
