import Foundation

/// A comment (`t1`). In a comments response it carries its `replies`; in a ``CommentTree`` the
/// replies are nodes of their own and `replies` is nil.
public struct Comment: RedditThing, Codable {
    public static let thingKind = "t1"

    /// Base-36 id (`c1`).
    public var id: String
    /// Fullname (`t1_c1`).
    public var name: String
    /// Fullname of the parent: the post (`t3_`) for a top-level comment, else a comment (`t1_`).
    public var parentID: String
    /// Fullname of the post.
    public var linkID: String?
    public var subreddit: String?
    /// `[deleted]` once the author deleted their account or the comment.
    public var author: String
    /// Markdown; `[deleted]` or `[removed]` when gone.
    public var body: String
    public var score: Int
    public var scoreHidden: Bool
    /// The user's vote: true up, false down, nil none.
    public var likes: Bool?
    public var saved: Bool
    /// Nesting level Reddit reports (0 at the top); absent outside comment trees.
    public var depth: Int?
    /// True when the author also wrote the post.
    public var isSubmitter: Bool
    public var stickied: Bool
    /// `moderator`, `admin` or nil.
    public var distinguished: String?
    /// Seconds since 1970, UTC.
    public var createdUTC: Double
    /// When the comment was last edited, seconds since 1970; nil if never.
    public var edited: Double?
    public var permalink: String?
    /// The post's title, present in user listings.
    public var linkTitle: String?
    /// Direct replies; nil when there are none (Reddit's `""`).
    public var replies: Listing<CommentTreeItem>?

    public init(
        id: String, name: String, parentID: String, linkID: String? = nil, subreddit: String? = nil, author: String, body: String, score: Int,
        scoreHidden: Bool = false, likes: Bool? = nil, saved: Bool = false, depth: Int? = nil, isSubmitter: Bool = false, stickied: Bool = false,
        distinguished: String? = nil, createdUTC: Double, edited: Double? = nil, permalink: String? = nil, linkTitle: String? = nil,
        replies: Listing<CommentTreeItem>? = nil
    ) {
        self.id = id
        self.name = name
        self.parentID = parentID
        self.linkID = linkID
        self.subreddit = subreddit
        self.author = author
        self.body = body
        self.score = score
        self.scoreHidden = scoreHidden
        self.likes = likes
        self.saved = saved
        self.depth = depth
        self.isSubmitter = isSubmitter
        self.stickied = stickied
        self.distinguished = distinguished
        self.createdUTC = createdUTC
        self.edited = edited
        self.permalink = permalink
        self.linkTitle = linkTitle
        self.replies = replies
    }

    enum CodingKeys: String, CodingKey {
        case id, name
        case parentID = "parent_id"
        case linkID = "link_id"
        case subreddit, author, body, score
        case scoreHidden = "score_hidden"
        case likes, saved, depth
        case isSubmitter = "is_submitter"
        case stickied, distinguished
        case createdUTC = "created_utc"
        case edited, permalink
        case linkTitle = "link_title"
        case replies
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        parentID = try container.decode(String.self, forKey: .parentID)
        linkID = try container.decodeIfPresent(String.self, forKey: .linkID)
        subreddit = try container.decodeIfPresent(String.self, forKey: .subreddit)
        author = try container.decode(String.self, forKey: .author)
        body = try container.decode(String.self, forKey: .body)
        score = try container.decode(Int.self, forKey: .score)
        scoreHidden = try container.value(.scoreHidden, or: false)
        likes = try container.decodeIfPresent(Bool.self, forKey: .likes)
        saved = try container.value(.saved, or: false)
        depth = try container.decodeIfPresent(Int.self, forKey: .depth)
        isSubmitter = try container.value(.isSubmitter, or: false)
        stickied = try container.value(.stickied, or: false)
        distinguished = try container.decodeIfPresent(String.self, forKey: .distinguished)
        createdUTC = try container.decode(Double.self, forKey: .createdUTC)
        edited = try container.editedTime(.edited)
        permalink = try container.decodeIfPresent(String.self, forKey: .permalink)
        linkTitle = try container.decodeIfPresent(String.self, forKey: .linkTitle)
        replies = try container.replies(.replies)
    }

    /// When the comment was made.
    public var created: Date { Date(timeIntervalSince1970: createdUTC) }
}
