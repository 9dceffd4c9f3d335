/// A JSON object read for nothing but its shape: the `{}` of a write, or an envelope read only
/// for its errors. Anything but an object (an array, a string, HTML) fails to decode.
struct EmptyPayload: Decodable {
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: AnyKey.self)
    }
}
