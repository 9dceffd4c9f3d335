/// The `t` parameter of top and controversial listings and of search.
public enum TimeRange: String, Sendable, Equatable, CaseIterable, Codable {
    case hour, day, week, month, year, all

    /// Parses `t` as a caller gives it.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)`` for anything else.
    public init(parsing text: String) throws(RedditError) {
        guard let range = TimeRange(rawValue: text) else {
            throw .invalidInput(field: "t", value: text, rule: "one of \(TimeRange.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = range
    }
}
