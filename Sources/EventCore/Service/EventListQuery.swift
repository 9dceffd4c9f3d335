import Foundation

/// The payload of `list`: `{"category"?, "from"?, "to"?, "query"?, "include_past"?}`.
public struct EventListQuery: Decodable, Equatable, Sendable {
    /// Only events filed under this category (compared as a ``CategorySlug``).
    public var category: String?
    /// Only events that overlap `[from, to)`; either end may be open.
    public var from: Date?
    public var to: Date?
    /// Only events whose title, description or venue contain this text (case-insensitive).
    public var query: String?
    /// Also events that ended before now (default false).
    public var includePast: Bool

    /// Creates a query.
    public init(category: String? = nil, from: Date? = nil, to: Date? = nil, query: String? = nil, includePast: Bool = false) {
        self.category = category
        self.from = from
        self.to = to
        self.query = query
        self.includePast = includePast
    }

    enum CodingKeys: String, CodingKey {
        case category, from, to, query
        case includePast = "include_past"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            category: try container.decodeIfPresent(String.self, forKey: .category),
            from: try WireInstant.decode(container, .from), to: try WireInstant.decode(container, .to),
            query: try container.decodeIfPresent(String.self, forKey: .query),
            includePast: try container.decodeIfPresent(Bool.self, forKey: .includePast) ?? false)
    }
}
