/// A `more` stub: comments Reddit left out of a tree. With ids in `children` it is expanded
/// through `/api/morechildren`; the "continue this thread" stub (`id` `_`, no children) is
/// expanded by loading the thread under its parent comment.
public struct MoreComments: RedditThing, Codable {
    public static let thingKind = "more"

    /// The id of the first hidden comment, or `_` for "continue this thread".
    public var id: String
    public var name: String
    /// Fullname of the comment (or post) the hidden comments reply to.
    public var parentID: String
    /// How many comments the stub stands for, descendants included.
    public var count: Int
    public var depth: Int?
    /// Ids (without `t1_`) of the hidden direct children.
    public var children: [String]

    public init(id: String, name: String, parentID: String, count: Int, depth: Int? = nil, children: [String]) {
        self.id = id
        self.name = name
        self.parentID = parentID
        self.count = count
        self.depth = depth
        self.children = children
    }

    enum CodingKeys: String, CodingKey {
        case id, name
        case parentID = "parent_id"
        case count, depth, children
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        parentID = try container.decode(String.self, forKey: .parentID)
        count = try container.decode(Int.self, forKey: .count)
        depth = try container.decodeIfPresent(Int.self, forKey: .depth)
        children = try container.decode([String].self, forKey: .children)
    }

    /// True for "continue this thread": expand it with the comments endpoint's
    /// `focusCommentID` set to ``threadCommentID``, not with `/api/morechildren`.
    public var isContinueThread: Bool { id == "_" || children.isEmpty }

    /// The comment whose thread a "continue this thread" stub continues (its parent, without
    /// `t1_`); nil when the parent is the post.
    public var threadCommentID: String? {
        parentID.hasPrefix("t1_") ? String(parentID.dropFirst(3)) : nil
    }

    /// The ids for the next `/api/morechildren` call: at most 100.
    public var nextBatch: [String] { Array(children.prefix(RedditEndpoint.moreChildrenBatch)) }
}
