/// A subreddit (`t5`), as subscriptions and `about` describe it.
public struct Subreddit: RedditThing, Codable {
    public static let thingKind = "t5"

    /// Fullname (`t5_2qh0u`).
    public var name: String
    /// The name in URLs (`swift`).
    public var displayName: String
    public var title: String
    /// Nil when Reddit hides it (private subreddits).
    public var subscribers: Int?
    public var publicDescription: String?
    /// Empty or an image URL.
    public var iconImg: String?
    public var communityIcon: String?
    /// Path (`/r/swift/`).
    public var url: String
    /// Nil when no user is signed in.
    public var userIsSubscriber: Bool?
    public var over18: Bool?
    /// `public`, `private`, `restricted`, `gold_restricted`, `archived`, `user`, ...
    public var subredditType: String?
    /// Seconds since 1970, UTC.
    public var createdUTC: Double?

    public init(
        name: String, displayName: String, title: String, subscribers: Int? = nil, publicDescription: String? = nil, iconImg: String? = nil,
        communityIcon: String? = nil, url: String, userIsSubscriber: Bool? = nil, over18: Bool? = nil, subredditType: String? = nil,
        createdUTC: Double? = nil
    ) {
        self.name = name
        self.displayName = displayName
        self.title = title
        self.subscribers = subscribers
        self.publicDescription = publicDescription
        self.iconImg = iconImg
        self.communityIcon = communityIcon
        self.url = url
        self.userIsSubscriber = userIsSubscriber
        self.over18 = over18
        self.subredditType = subredditType
        self.createdUTC = createdUTC
    }

    enum CodingKeys: String, CodingKey {
        case name
        case displayName = "display_name"
        case title, subscribers
        case publicDescription = "public_description"
        case iconImg = "icon_img"
        case communityIcon = "community_icon"
        case url
        case userIsSubscriber = "user_is_subscriber"
        case over18 = "over18"
        case subredditType = "subreddit_type"
        case createdUTC = "created_utc"
    }
}
