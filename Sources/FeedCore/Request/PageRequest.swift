/// Listing pagination: `limit` (1...100, Reddit's default 25) and the `after` / `before` cursors,
/// which are fullnames taken from the previous page.
public struct PageRequest: Sendable, Equatable {
    public var limit: Int?
    public var after: String?
    public var before: String?

    public init(limit: Int? = nil, after: String? = nil, before: String? = nil) {
        self.limit = limit
        self.after = after
        self.before = before
    }

    /// The largest page Reddit serves.
    public static let maximumLimit = 100

    /// The query fields, in the order `limit`, `after`, `before`.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)`` for a limit outside 1...100 or
    ///   a cursor that is not a fullname.
    func fields() throws(RedditError) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let limit {
            guard (1...Self.maximumLimit).contains(limit) else {
                throw .invalidInput(field: "limit", value: String(limit), rule: "between 1 and \(Self.maximumLimit)")
            }
            fields.append(("limit", String(limit)))
        }
        if let after { fields.append(("after", try RedditNames.fullname(after, field: "after"))) }
        if let before { fields.append(("before", try RedditNames.fullname(before, field: "before"))) }
        return fields
    }
}
