/// How a subreddit, the front page or a user's listing is sorted. Top and controversial carry
/// their time range, so a range cannot be given to a sort that ignores it.
public enum ListingSort: Sendable, Equatable {
    case hot, new, rising, best
    case top(TimeRange)
    case controversial(TimeRange)

    /// The names ``init(name:time:)`` accepts.
    public static let names = ["hot", "new", "rising", "best", "top", "controversial"]

    /// Parses a sort and an optional `t` as a caller gives them; top and controversial without
    /// a range get `day`, Reddit's own default.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)`` for an unknown sort or range, or
    ///   a range on a sort that takes none.
    public init(name: String, time: String? = nil) throws(RedditError) {
        let range = try time.map { text throws(RedditError) in try TimeRange(parsing: text) }
        switch name {
        case "top": self = .top(range ?? .day)
        case "controversial": self = .controversial(range ?? .day)
        case "hot", "new", "rising", "best":
            if let time {
                throw .invalidInput(field: "t", value: time, rule: "only top and controversial take a time range")
            }
            switch name {
            case "hot": self = .hot
            case "new": self = .new
            case "rising": self = .rising
            default: self = .best
            }
        default:
            throw .invalidInput(field: "sort", value: name, rule: "one of \(Self.names.joined(separator: ", "))")
        }
    }

    /// The sort's name as Reddit spells it in paths and in `sort=`.
    public var name: String {
        switch self {
        case .hot: return "hot"
        case .new: return "new"
        case .rising: return "rising"
        case .best: return "best"
        case .top: return "top"
        case .controversial: return "controversial"
        }
    }

    /// The time range of top and controversial.
    public var timeRange: TimeRange? {
        switch self {
        case .top(let range), .controversial(let range): return range
        case .hot, .new, .rising, .best: return nil
        }
    }
}
