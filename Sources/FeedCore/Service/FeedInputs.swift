/// The inputs of the feed's methods, decoded from the request's JSON.
public enum FeedInput {
    /// `comments {"subreddit", "id", "sort"?}`.
    public struct Comments: Codable, Equatable, Sendable {
        public var subreddit: String
        public var id: String
        public var sort: String?
        public init(subreddit: String, id: String, sort: String? = nil) {
            self.subreddit = subreddit
            self.id = id
            self.sort = sort
        }
    }

    /// `more_comments {"id": post, "children": [ids], "sort"?}`.
    public struct MoreComments: Codable, Equatable, Sendable {
        public var id: String
        public var children: [String]
        public var sort: String?
        public init(id: String, children: [String], sort: String? = nil) {
            self.id = id
            self.children = children
            self.sort = sort
        }
    }

    /// `vote {"id", "dir": 1|0|-1}`.
    public struct Vote: Codable, Equatable, Sendable {
        public var id: String
        public var dir: Int
        public init(id: String, dir: Int) {
            self.id = id
            self.dir = dir
        }
    }

    /// `save {"id"}` and `unsave {"id"}`.
    public struct Thing: Codable, Equatable, Sendable {
        public var id: String
        public init(id: String) { self.id = id }
    }

    /// `subscribe {"subreddit", "action": "sub|unsub"}`.
    public struct Subscribe: Codable, Equatable, Sendable {
        public var subreddit: String
        public var action: String
        public init(subreddit: String, action: String) {
            self.subreddit = subreddit
            self.action = action
        }
    }

    /// `search {"q", "subreddit"?, "sort"?, "t"?, "after"?, "limit"?}`.
    public struct Search: Codable, Equatable, Sendable {
        public var q: String
        public var subreddit: String?
        public var sort: String?
        public var t: String?
        public var after: String?
        public var limit: Int?
        public init(q: String, subreddit: String? = nil, sort: String? = nil, t: String? = nil, after: String? = nil, limit: Int? = nil) {
            self.q = q
            self.subreddit = subreddit
            self.sort = sort
            self.t = t
            self.after = after
            self.limit = limit
        }
    }

    /// `search_subreddits {"query"}`.
    public struct SearchSubreddits: Codable, Equatable, Sendable {
        public var query: String
        public init(query: String) { self.query = query }
    }

    /// `user {"name", "where"?}`: `about` (default), `overview`, `submitted`, `comments`, `saved`.
    public struct User: Codable, Equatable, Sendable {
        public var name: String
        public var `where`: String?
        public var after: String?
        public init(name: String, where: String? = nil, after: String? = nil) {
            self.name = name
            self.where = `where`
            self.after = after
        }
    }
}
