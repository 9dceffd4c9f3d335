/// The answer of a pass-through call, encoded as its reply.
public enum FeedAnswer: Equatable, Sendable, Encodable {
    case comments(CommentsPage)
    case moreComments([CommentNode])
    case posts(Listing<Post>)
    case subreddits([SubredditSearchResult])
    case account(Account)
    case userContent(Listing<UserContentItem>)

    private enum CodingKeys: String, CodingKey {
        case post, comments, things, posts, after, before, subreddits, user, items
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .comments(let page):
            try container.encode(page.post, forKey: .post)
            try container.encode(page.tree.nodes, forKey: .comments)
        case .moreComments(let nodes):
            try container.encode(nodes, forKey: .comments)
        case .posts(let listing):
            try container.encode(listing.children, forKey: .posts)
            try container.encode(listing.after, forKey: .after)
            try container.encode(listing.before, forKey: .before)
        case .subreddits(let results):
            try container.encode(results, forKey: .subreddits)
        case .account(let account):
            try container.encode(account, forKey: .user)
        case .userContent(let listing):
            try container.encode(listing.children, forKey: .items)
            try container.encode(listing.after, forKey: .after)
            try container.encode(listing.before, forKey: .before)
        }
    }
}
