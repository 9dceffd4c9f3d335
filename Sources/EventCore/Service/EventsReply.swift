/// The JSON answers of the `events` methods (snake_case keys; events as ``Event`` writes them).
public enum EventsReply {
    /// `list`: the matching events sorted by start (then id), and how many of the events that
    /// match everything but `category` are in each category, so a client can show its tabs.
    public struct List: Codable, Equatable, Sendable {
        public var count: Int
        public var events: [Event]
        public var categories: [CategoryCount]
    }

    /// One category of a ``List`` and how many events it has.
    public struct CategoryCount: Codable, Equatable, Sendable {
        public var category: String
        public var count: Int
    }

    /// `like` and `unlike`.
    public struct Like: Codable, Equatable, Sendable {
        public var id: String
        public var user: String
        public var liked: Bool
        public var likeCount: Int

        enum CodingKeys: String, CodingKey {
            case id, user, liked
            case likeCount = "like_count"
        }
    }

    /// `rsvp`: where the user stands now: `going`, `waitlisted` (with the 1-based position)
    /// or `not_going`.
    public struct RSVP: Codable, Equatable, Sendable {
        public var id: String
        public var user: String
        public var status: String
        public var waitlistPosition: Int?
        public var goingCount: Int
        public var waitlistCount: Int
        public var capacity: Int?

        enum CodingKeys: String, CodingKey {
            case id, user, status, capacity
            case waitlistPosition = "waitlist_position"
            case goingCount = "going_count"
            case waitlistCount = "waitlist_count"
        }
    }

    /// `mine`: the signed-in user's liked, going and waitlisted events, each sorted by start.
    public struct Mine: Codable, Equatable, Sendable {
        public var user: String
        public var liked: [Event]
        public var going: [Event]
        public var waitlisted: [Event]
    }

    /// `import`: the ids imported new and updated, and every VEVENT or event left out with why.
    public struct Import: Codable, Equatable, Sendable {
        public var imported: [String]
        public var updated: [String]
        public var skipped: [Skip]
    }

    /// An imported VEVENT (with its line) or event (with its id) that changed nothing.
    public struct Skip: Codable, Equatable, Sendable {
        public var line: Int?
        public var uid: String?
        public var id: String?
        public var reason: String
    }

    /// `export`: an iCalendar document (CRLF lines) and how many events it holds.
    public struct Export: Codable, Equatable, Sendable {
        public var count: Int
        public var ics: String
    }
}
