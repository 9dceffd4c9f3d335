import Foundation

/// The payload of `export`: `{"from"?, "to"?}`; an open end takes every event on that side.
public struct ExportRange: Decodable, Equatable, Sendable {
    public var from: Date?
    public var to: Date?

    /// Creates a range.
    public init(from: Date? = nil, to: Date? = nil) {
        self.from = from
        self.to = to
    }

    enum CodingKeys: String, CodingKey {
        case from, to
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(from: try WireInstant.decode(container, .from), to: try WireInstant.decode(container, .to))
    }
}
