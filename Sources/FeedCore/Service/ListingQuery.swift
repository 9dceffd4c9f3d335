/// The input of `listing`: `{"subreddit"?, "sort"?, "t"?, "after"?, "limit"?}`. No subreddit is
/// the front page; sort defaults to `hot`.
public struct ListingQuery: Codable, Equatable, Sendable {
    public var subreddit: String?
    public var sort: String?
    public var t: String?
    public var after: String?
    public var limit: Int?

    public init(subreddit: String? = nil, sort: String? = nil, t: String? = nil, after: String? = nil, limit: Int? = nil) {
        self.subreddit = subreddit
        self.sort = sort
        self.t = t
        self.after = after
        self.limit = limit
    }

    /// The endpoint, validated (names, sort, range, cursor, limit).
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)``.
    public func endpoint() throws(RedditError) -> RedditEndpoint {
        let sort = try ListingSort(name: self.sort ?? "hot", time: t)
        let page = PageRequest(limit: limit, after: after)
        let endpoint: RedditEndpoint
        if let subreddit {
            endpoint = .subreddit(name: subreddit, sort: sort, page: page)
        } else {
            endpoint = .frontPage(sort: sort, page: page)
        }
        _ = try endpoint.route()
        return endpoint
    }

    /// The topic token of this query (`feed.listing.<key>`): the subreddit (lowercased, `+`
    /// as `-`) or `front`, the sort, and a hash of the whole query, so two queries never share
    /// a key and every key is lowercase letters, digits, `_` and `-`.
    public var key: String {
        let scope = subreddit.map { $0.lowercased().replacingOccurrences(of: "+", with: "-") } ?? "front"
        let sort = (self.sort ?? "hot").lowercased()
        let canonical = [subreddit?.lowercased() ?? "", sort, t ?? "", after ?? "", limit.map(String.init) ?? ""].joined(separator: "|")
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in canonical.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "\(scope)-\(sort)-\(String(repeating: "0", count: 16 - hex.count))\(hex)"
    }
}
