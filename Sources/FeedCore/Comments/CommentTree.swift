/// A comment tree flattened in reading order (pre-order): each comment is followed by its
/// replies at a greater depth, and `more` stubs stay where Reddit put them so they can be
/// expanded in place. Comments in the tree hold no `replies` of their own.
public struct CommentTree: Sendable, Equatable, Codable {
    public internal(set) var nodes: [CommentNode]

    public init(nodes: [CommentNode] = []) {
        self.nodes = nodes
    }

    /// Flattens a comments listing, the second element of the comments endpoint's answer.
    public init(_ listing: Listing<CommentTreeItem>) {
        nodes = []
        Self.flatten(listing.children, depth: 0, into: &nodes)
    }

    /// The comments, without stubs.
    public var comments: [Comment] { nodes.compactMap(\.comment) }

    /// The `more` stubs, in reading order.
    public var moreStubs: [MoreComments] { nodes.compactMap(\.more) }

    private enum CodingKeys: String, CodingKey {
        case nodes
    }

    static func flatten(_ items: [CommentTreeItem], depth: Int, into nodes: inout [CommentNode]) {
        for item in items {
            switch item {
            case .comment(var comment):
                let replies = comment.replies?.children ?? []
                comment.replies = nil
                nodes.append(CommentNode(depth: depth, item: .comment(comment)))
                flatten(replies, depth: depth + 1, into: &nodes)
            case .more:
                nodes.append(CommentNode(depth: depth, item: item))
            }
        }
    }

    /// The index just past the subtree of the node at `index`.
    func subtreeEnd(of index: Int) -> Int {
        let depth = nodes[index].depth
        var end = index + 1
        while end < nodes.count, nodes[end].depth > depth { end += 1 }
        return end
    }
}
