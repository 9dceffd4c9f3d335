import Foundation

/// A post (`t3`). Fields every view of a post carries are required; flags Reddit leaves out of
/// some views read as false.
public struct Post: RedditThing, Codable {
    public static let thingKind = "t3"

    /// Base-36 id (`1abc1`).
    public var id: String
    /// Fullname (`t3_1abc1`): what votes, saves and cursors take.
    public var name: String
    public var subreddit: String
    public var title: String
    public var author: String
    public var score: Int
    public var ups: Int
    public var upvoteRatio: Double?
    public var numComments: Int
    /// Seconds since 1970, UTC.
    public var createdUTC: Double
    /// Path on reddit.com (`/r/swift/comments/1abc1/slug/`).
    public var permalink: String
    /// The link, or the post's own page for a self post.
    public var url: String
    public var domain: String?
    public var isSelf: Bool
    /// The text of a self post, Markdown; empty for links.
    public var selftext: String
    /// An image URL or one of `self`, `default`, `image`, `nsfw`, `spoiler`, `""`.
    public var thumbnail: String?
    public var over18: Bool
    public var spoiler: Bool
    public var stickied: Bool
    public var locked: Bool
    /// The user's vote: true up, false down, nil none.
    public var likes: Bool?
    public var saved: Bool
    /// When the post was last edited, seconds since 1970; nil if never.
    public var edited: Double?
    public var linkFlairText: String?

    public init(
        id: String, name: String, subreddit: String, title: String, author: String, score: Int = 1, ups: Int = 1, upvoteRatio: Double? = nil,
        numComments: Int = 0, createdUTC: Double, permalink: String, url: String, domain: String? = nil, isSelf: Bool = false,
        selftext: String = "", thumbnail: String? = nil, over18: Bool = false, spoiler: Bool = false, stickied: Bool = false,
        locked: Bool = false, likes: Bool? = nil, saved: Bool = false, edited: Double? = nil, linkFlairText: String? = nil
    ) {
        self.id = id
        self.name = name
        self.subreddit = subreddit
        self.title = title
        self.author = author
        self.score = score
        self.ups = ups
        self.upvoteRatio = upvoteRatio
        self.numComments = numComments
        self.createdUTC = createdUTC
        self.permalink = permalink
        self.url = url
        self.domain = domain
        self.isSelf = isSelf
        self.selftext = selftext
        self.thumbnail = thumbnail
        self.over18 = over18
        self.spoiler = spoiler
        self.stickied = stickied
        self.locked = locked
        self.likes = likes
        self.saved = saved
        self.edited = edited
        self.linkFlairText = linkFlairText
    }

    enum CodingKeys: String, CodingKey {
        case id, name, subreddit, title, author, score, ups
        case upvoteRatio = "upvote_ratio"
        case numComments = "num_comments"
        case createdUTC = "created_utc"
        case permalink, url, domain
        case isSelf = "is_self"
        case selftext, thumbnail
        case over18 = "over_18"
        case spoiler, stickied, locked, likes, saved, edited
        case linkFlairText = "link_flair_text"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        subreddit = try container.decode(String.self, forKey: .subreddit)
        title = try container.decode(String.self, forKey: .title)
        author = try container.decode(String.self, forKey: .author)
        score = try container.decode(Int.self, forKey: .score)
        ups = try container.value(.ups, or: score)
        upvoteRatio = try container.decodeIfPresent(Double.self, forKey: .upvoteRatio)
        numComments = try container.decode(Int.self, forKey: .numComments)
        createdUTC = try container.decode(Double.self, forKey: .createdUTC)
        permalink = try container.decode(String.self, forKey: .permalink)
        url = try container.decode(String.self, forKey: .url)
        domain = try container.decodeIfPresent(String.self, forKey: .domain)
        isSelf = try container.value(.isSelf, or: false)
        selftext = try container.value(.selftext, or: "")
        thumbnail = try container.decodeIfPresent(String.self, forKey: .thumbnail)
        over18 = try container.value(.over18, or: false)
        spoiler = try container.value(.spoiler, or: false)
        stickied = try container.value(.stickied, or: false)
        locked = try container.value(.locked, or: false)
        likes = try container.decodeIfPresent(Bool.self, forKey: .likes)
        saved = try container.value(.saved, or: false)
        edited = try container.editedTime(.edited)
        linkFlairText = try container.decodeIfPresent(String.self, forKey: .linkFlairText)
    }

    /// When the post was made.
    public var created: Date { Date(timeIntervalSince1970: createdUTC) }
}
