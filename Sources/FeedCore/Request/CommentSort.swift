/// The `sort` of a comment tree; `confidence` is what Reddit's UI calls "best".
public enum CommentSort: String, Sendable, Equatable, CaseIterable, Codable {
    case confidence, top, new, controversial, old, random, qa, live

    /// Parses `sort` as a caller gives it; `best` is accepted for `confidence`.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)`` for anything else.
    public init(parsing text: String) throws(RedditError) {
        if text == "best" {
            self = .confidence
            return
        }
        guard let sort = CommentSort(rawValue: text) else {
            throw .invalidInput(field: "sort", value: text, rule: "one of best, \(CommentSort.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = sort
    }
}
