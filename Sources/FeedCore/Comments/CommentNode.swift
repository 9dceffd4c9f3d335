/// One row of a flattened comment tree: a comment (its replies are the rows after it) or a
/// `more` stub, at a nesting depth counted from 0 for top-level comments.
public struct CommentNode: Sendable, Equatable, Codable {
    public var depth: Int
    public var item: CommentTreeItem

    public init(depth: Int, item: CommentTreeItem) {
        self.depth = depth
        self.item = item
    }

    /// The comment, or nil for a stub.
    public var comment: Comment? {
        if case .comment(let comment) = item { return comment }
        return nil
    }

    /// The stub, or nil for a comment.
    public var more: MoreComments? {
        if case .more(let more) = item { return more }
        return nil
    }

    private enum CodingKeys: String, CodingKey {
        case depth, thing
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        depth = try container.decode(Int.self, forKey: .depth)
        item = try container.decode(CommentTreeItem.self, forKey: .thing)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(depth, forKey: .depth)
        try container.encode(item, forKey: .thing)
    }
}
