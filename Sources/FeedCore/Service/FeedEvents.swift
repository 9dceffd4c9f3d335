/// The change events the feed publishes (not retained).
public enum FeedEvent {
    /// Where a write stands: sent and shown (`pending`), taken by Reddit (`confirmed`), or
    /// refused and undone (`rolled_back`, with the error).
    public enum Status: String, Codable, Sendable {
        case pending, confirmed
        case rolledBack = "rolled_back"
    }

    /// `feed.post.voted`: `{"id", "dir", "likes", "status", "error"}`.
    public struct Voted: Codable, Equatable, Sendable {
        public var id: String
        public var dir: Int
        /// The `likes` the thing shows now (after a rollback: the one it had before).
        public var likes: Bool?
        public var status: Status
        public var error: String?

        public init(id: String, dir: Int, likes: Bool?, status: Status, error: String? = nil) {
            self.id = id
            self.dir = dir
            self.likes = likes
            self.status = status
            self.error = error
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(dir, forKey: .dir)
            try container.encode(likes, forKey: .likes)
            try container.encode(status, forKey: .status)
            try container.encode(error, forKey: .error)
        }
    }

    /// `feed.post.saved`: `{"id", "saved", "status", "error"}`.
    public struct Saved: Codable, Equatable, Sendable {
        public var id: String
        /// What the thing shows now (after a rollback: what it was before).
        public var saved: Bool
        public var status: Status
        public var error: String?

        public init(id: String, saved: Bool, status: Status, error: String? = nil) {
            self.id = id
            self.saved = saved
            self.status = status
            self.error = error
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(saved, forKey: .saved)
            try container.encode(status, forKey: .status)
            try container.encode(error, forKey: .error)
        }
    }

    /// `feed.subreddit.subscribed`: `{"subreddit", "action"}` once Reddit took it.
    public struct Subscribed: Codable, Equatable, Sendable {
        public var subreddit: String
        public var action: String

        public init(subreddit: String, action: String) {
            self.subreddit = subreddit
            self.action = action
        }
    }
}
