/// One match of `POST /api/search_subreddits`.
public struct SubredditSearchResult: Sendable, Equatable, Codable {
    /// The display name (`swift`).
    public var name: String
    public var subscriberCount: Int?
    public var activeUserCount: Int?
    public var iconImg: String?
    /// `#rrggbb` or empty.
    public var keyColor: String?

    public init(name: String, subscriberCount: Int? = nil, activeUserCount: Int? = nil, iconImg: String? = nil, keyColor: String? = nil) {
        self.name = name
        self.subscriberCount = subscriberCount
        self.activeUserCount = activeUserCount
        self.iconImg = iconImg
        self.keyColor = keyColor
    }

    enum CodingKeys: String, CodingKey {
        case name
        case subscriberCount = "subscriber_count"
        case activeUserCount = "active_user_count"
        case iconImg = "icon_img"
        case keyColor = "key_color"
    }
}
