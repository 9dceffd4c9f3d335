import Foundation

/// A Reddit account (`t2`): `/api/v1/me` returns it bare, `/user/{name}/about` wrapped.
public struct Account: RedditThing, Codable {
    public static let thingKind = "t2"

    /// Base-36 id without `t2_`; nil for a suspended account, which Reddit shows by name only.
    public var id: String?
    public var name: String
    /// Seconds since 1970, UTC.
    public var createdUTC: Double?
    public var iconImg: String?
    public var linkKarma: Int?
    public var commentKarma: Int?
    public var totalKarma: Int?
    /// True once the user has subscribed to anything (`me` only).
    public var hasSubscribed: Bool?
    public var isSuspended: Bool?

    public init(
        id: String?, name: String, createdUTC: Double? = nil, iconImg: String? = nil, linkKarma: Int? = nil, commentKarma: Int? = nil,
        totalKarma: Int? = nil, hasSubscribed: Bool? = nil, isSuspended: Bool? = nil
    ) {
        self.id = id
        self.name = name
        self.createdUTC = createdUTC
        self.iconImg = iconImg
        self.linkKarma = linkKarma
        self.commentKarma = commentKarma
        self.totalKarma = totalKarma
        self.hasSubscribed = hasSubscribed
        self.isSuspended = isSuspended
    }

    enum CodingKeys: String, CodingKey {
        case id, name
        case createdUTC = "created_utc"
        case iconImg = "icon_img"
        case linkKarma = "link_karma"
        case commentKarma = "comment_karma"
        case totalKarma = "total_karma"
        case hasSubscribed = "has_subscribed"
        case isSuspended = "is_suspended"
    }

    /// When the account was made.
    public var created: Date? { createdUTC.map(Date.init(timeIntervalSince1970:)) }
}
