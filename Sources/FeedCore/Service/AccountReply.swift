/// The answer of `me`: `feed.user`'s value and whether it is stale.
public struct AccountReply: Codable, Equatable, Sendable {
    public var account: FeedAccount
    public var stale: Bool

    public init(account: FeedAccount, stale: Bool) {
        self.account = account
        self.stale = stale
    }

    enum CodingKeys: String, CodingKey { case stale }

    public init(from decoder: any Decoder) throws {
        account = try FeedAccount(from: decoder)
        stale = try decoder.container(keyedBy: CodingKeys.self).decode(Bool.self, forKey: .stale)
    }

    public func encode(to encoder: any Encoder) throws {
        try account.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(stale, forKey: .stale)
    }
}
