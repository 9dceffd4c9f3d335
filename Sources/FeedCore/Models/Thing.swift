/// The `{"kind": "...", "data": {...}}` wrapper around one item.
struct Thing<Item: ListingItem>: Codable {
    var item: Item

    init(_ item: Item) {
        self.item = item
    }

    private enum CodingKeys: String, CodingKey {
        case kind, data
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        item = try Item(kind: kind, data: try container.superDecoder(forKey: .data))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(item.kind, forKey: .kind)
        try item.encodeData(to: container.superEncoder(forKey: .data))
    }
}
