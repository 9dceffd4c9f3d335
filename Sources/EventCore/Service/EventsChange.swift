/// The change events `events` publishes (not retained), after the state topics they go with.
public enum EventsChange {
    /// `events.created` and `events.updated`: which events, and whether a `create`/`update`
    /// request or an `import` made them.
    public struct Changed: Codable, Equatable, Sendable {
        public var ids: [String]
        public var cause: String
    }

    /// `events.cancelled`: the event and who was going or waiting (they stay on the lists, so
    /// they can be told; nobody can join any more).
    public struct Cancelled: Codable, Equatable, Sendable {
        public var id: String
        public var going: [String]
        public var waitlist: [String]
    }

    /// `events.liked`: a like or an unlike that changed something.
    public struct Liked: Codable, Equatable, Sendable {
        public var id: String
        public var user: String
        public var liked: Bool
        public var likeCount: Int

        enum CodingKeys: String, CodingKey {
            case id, user, liked
            case likeCount = "like_count"
        }
    }

    /// `events.rsvp.changed`: the user's new status and who moved up from the waitlist.
    public struct RSVPChanged: Codable, Equatable, Sendable {
        public var id: String
        public var user: String
        public var status: String
        public var promoted: [String]
        public var goingCount: Int
        public var waitlistCount: Int

        enum CodingKeys: String, CodingKey {
            case id, user, status, promoted
            case goingCount = "going_count"
            case waitlistCount = "waitlist_count"
        }
    }
}
