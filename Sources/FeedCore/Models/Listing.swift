/// One page of a Reddit listing: `{"kind":"Listing","data":{"after":...,"before":...,"children":[...]}}`.
/// `after` is the cursor for the next page and is nil on the last one.
public struct Listing<Item: ListingItem>: Sendable, Equatable, Codable {
    public var after: String?
    public var before: String?
    public var children: [Item]

    public init(after: String? = nil, before: String? = nil, children: [Item]) {
        self.after = after
        self.before = before
        self.children = children
    }

    private enum CodingKeys: String, CodingKey {
        case kind, data
    }

    private enum DataKeys: String, CodingKey {
        case after, before, children
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        guard kind == "Listing" else {
            throw DecodingError.dataCorruptedError(forKey: .kind, in: container, debugDescription: "expected kind Listing, found \(kind)")
        }
        let data = try container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
        after = try data.decodeIfPresent(String.self, forKey: .after)
        before = try data.decodeIfPresent(String.self, forKey: .before)
        children = try data.decodeIfPresent([Thing<Item>].self, forKey: .children)?.map(\.item) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("Listing", forKey: .kind)
        var data = container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
        try data.encode(after, forKey: .after)
        try data.encode(before, forKey: .before)
        try data.encode(children.map(Thing.init), forKey: .children)
    }
}
