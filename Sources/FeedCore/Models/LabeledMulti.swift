/// A custom feed (`LabeledMulti`) from `/api/multi/mine`.
public struct LabeledMulti: RedditThing, Codable {
    public static let thingKind = "LabeledMulti"

    /// One subreddit of the feed.
    public struct Member: Sendable, Equatable, Codable {
        public var name: String

        public init(name: String) {
            self.name = name
        }
    }

    /// The short name (`swiftlang`).
    public var name: String
    public var displayName: String
    /// Path (`/user/alice/m/swiftlang`).
    public var path: String
    public var iconURL: String?
    /// `private`, `public` or `hidden`.
    public var visibility: String?
    public var subreddits: [Member]

    public init(name: String, displayName: String, path: String, iconURL: String? = nil, visibility: String? = nil, subreddits: [Member]) {
        self.name = name
        self.displayName = displayName
        self.path = path
        self.iconURL = iconURL
        self.visibility = visibility
        self.subreddits = subreddits
    }

    enum CodingKeys: String, CodingKey {
        case name
        case displayName = "display_name"
        case path
        case iconURL = "icon_url"
        case visibility, subreddits
    }

    /// The member subreddits' names, in Reddit's order.
    public var subredditNames: [String] { subreddits.map(\.name) }
}
