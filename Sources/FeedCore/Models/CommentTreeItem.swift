/// A child of a comment listing: a comment or a `more` stub.
public enum CommentTreeItem: ListingItem, Codable {
    case comment(Comment)
    case more(MoreComments)

    public init(kind: String, data decoder: any Decoder) throws {
        switch kind {
        case Comment.thingKind: self = .comment(try Comment(from: decoder))
        case MoreComments.thingKind: self = .more(try MoreComments(from: decoder))
        default:
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "expected t1 or more, found \(kind)"))
        }
    }

    public var kind: String {
        switch self {
        case .comment: return Comment.thingKind
        case .more: return MoreComments.thingKind
        }
    }

    public func encodeData(to encoder: any Encoder) throws {
        switch self {
        case .comment(let comment): try comment.encode(to: encoder)
        case .more(let more): try more.encode(to: encoder)
        }
    }

    /// Decodes `{"kind": ..., "data": ...}`.
    public init(from decoder: any Decoder) throws {
        self = try Thing<CommentTreeItem>(from: decoder).item
    }

    /// Encodes `{"kind": ..., "data": ...}`.
    public func encode(to encoder: any Encoder) throws {
        try Thing(self).encode(to: encoder)
    }

    /// Fullname of the parent.
    public var parentID: String {
        switch self {
        case .comment(let comment): return comment.parentID
        case .more(let more): return more.parentID
        }
    }
}
