/// What the comments endpoint returns: the post and its comment tree.
public struct CommentsPage: Sendable, Equatable, Codable {
    public var post: Post
    public var tree: CommentTree

    public init(post: Post, tree: CommentTree) {
        self.post = post
        self.tree = tree
    }
}
