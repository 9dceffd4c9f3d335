/// The comments endpoint's answer, `[postListing, commentListing]`.
struct CommentsPair: Decodable {
    var post: Listing<Post>
    var comments: Listing<CommentTreeItem>

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        post = try container.decode(Listing<Post>.self)
        comments = try container.decode(Listing<CommentTreeItem>.self)
    }
}
