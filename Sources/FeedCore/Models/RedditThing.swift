/// A value of exactly one thing kind (`t3` post, `t1` comment, `t5` subreddit, ...) whose
/// `data` object is its own Codable form.
public protocol RedditThing: ListingItem, Codable {
    /// The one kind this type decodes from.
    static var thingKind: String { get }
}

extension RedditThing {
    public init(kind: String, data decoder: any Decoder) throws {
        guard kind == Self.thingKind else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "expected kind \(Self.thingKind), found \(kind)"))
        }
        try self.init(from: decoder)
    }

    public var kind: String { Self.thingKind }

    public func encodeData(to encoder: any Encoder) throws {
        try encode(to: encoder)
    }
}
