/// A value that arrives wrapped as a Reddit thing, `{"kind": "...", "data": {...}}`, such as a
/// listing's child. Mixed listings (comments and `more` stubs) are enums of several kinds.
public protocol ListingItem: Sendable, Equatable {
    /// Decodes the value from the thing's `kind` and a decoder for its `data` object.
    init(kind: String, data decoder: any Decoder) throws
    /// The `kind` to wrap the value in.
    var kind: String { get }
    /// Encodes the `data` object.
    func encodeData(to encoder: any Encoder) throws
}
