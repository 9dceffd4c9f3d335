/// The `sort` of a post search.
public enum SearchSort: String, Sendable, Equatable, CaseIterable, Codable {
    case relevance, hot, top, new, comments

    /// Parses `sort` as a caller gives it.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)`` for anything else.
    public init(parsing text: String) throws(RedditError) {
        guard let sort = SearchSort(rawValue: text) else {
            throw .invalidInput(field: "sort", value: text, rule: "one of \(SearchSort.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = sort
    }
}
