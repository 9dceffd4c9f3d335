/// Gathers the signed-in user's subscriptions across pages: follow `after` until it is null,
/// then sort by display name, case-insensitively.
///
/// ```swift
/// var collector = SubscriptionCollector()
/// var endpoint: RedditEndpoint? = collector.nextEndpoint
/// while let current = endpoint {
///     let page = try response(for: current).subscriptionsPage(for: current)
///     endpoint = try collector.add(page)
/// }
/// let subscriptions = collector.subscriptions
/// ```
public struct SubscriptionCollector: Sendable, Equatable {
    /// The subscriptions gathered so far, in Reddit's order, without repeats.
    public private(set) var collected: [Subreddit] = []
    /// True once a page came back with no `after`.
    public private(set) var isComplete = false
    private var cursor: String?
    private var seenCursors: Set<String> = []
    private var seenNames: Set<String> = []

    public init() {}

    /// The request for the next page; nil once complete.
    public var nextEndpoint: RedditEndpoint? {
        isComplete ? nil : .mySubscriptions(after: cursor)
    }

    /// Adds a page and tells what to ask next.
    /// - Returns: The endpoint of the next page, or nil when this was the last one.
    /// - Throws: ``RedditError/invalidResponse(status:excerpt:)`` when Reddit hands back a
    ///   cursor it gave before, which would otherwise loop forever.
    @discardableResult
    public mutating func add(_ page: Listing<Subreddit>) throws(RedditError) -> RedditEndpoint? {
        for subreddit in page.children where seenNames.insert(subreddit.name).inserted {
            collected.append(subreddit)
        }
        guard let after = page.after else {
            isComplete = true
            cursor = nil
            return nil
        }
        guard seenCursors.insert(after).inserted else {
            throw .invalidResponse(status: 200, excerpt: "subscriptions page cursor \(after) came back twice")
        }
        cursor = after
        return nextEndpoint
    }

    /// The subscriptions sorted by display name, ignoring case.
    public var subscriptions: [Subreddit] { Self.sortedByName(collected) }

    /// Sorts subreddits by display name ignoring case; names equal but for case keep a stable
    /// order by exact name.
    public static func sortedByName(_ subreddits: [Subreddit]) -> [Subreddit] {
        subreddits.sorted { lhs, rhs in
            let left = lhs.displayName.lowercased()
            let right = rhs.displayName.lowercased()
            return left == right ? lhs.displayName < rhs.displayName : left < right
        }
    }
}
