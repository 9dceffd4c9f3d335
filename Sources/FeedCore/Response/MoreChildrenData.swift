/// `json.data` of `/api/morechildren`.
struct MoreChildrenData: Decodable {
    var things: [CommentTreeItem]
}
