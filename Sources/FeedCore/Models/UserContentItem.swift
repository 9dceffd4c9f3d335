/// A child of a user's overview or saved listing: a post or a comment.
public enum UserContentItem: ListingItem, Codable {
    case post(Post)
    case comment(Comment)

    public init(kind: String, data decoder: any Decoder) throws {
        switch kind {
        case Post.thingKind: self = .post(try Post(from: decoder))
        case Comment.thingKind: self = .comment(try Comment(from: decoder))
        default:
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "expected t3 or t1, found \(kind)"))
        }
    }

    public var kind: String {
        switch self {
        case .post: return Post.thingKind
        case .comment: return Comment.thingKind
        }
    }

    public func encodeData(to encoder: any Encoder) throws {
        switch self {
        case .post(let post): try post.encode(to: encoder)
        case .comment(let comment): try comment.encode(to: encoder)
        }
    }

    /// Decodes `{"kind": ..., "data": ...}`.
    public init(from decoder: any Decoder) throws {
        self = try Thing<UserContentItem>(from: decoder).item
    }

    /// Encodes `{"kind": ..., "data": ...}`.
    public func encode(to encoder: any Encoder) throws {
        try Thing(self).encode(to: encoder)
    }

    /// Fullname of the post or comment.
    public var name: String {
        switch self {
        case .post(let post): return post.name
        case .comment(let comment): return comment.name
        }
    }
}
