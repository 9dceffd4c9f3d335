/// The answer of `listing`: the cached listing and whether it is stale (served from the store
/// because Reddit could not be reached).
public struct ListingReply: Codable, Equatable, Sendable {
    public var listing: CachedListing
    public var stale: Bool

    public init(listing: CachedListing, stale: Bool) {
        self.listing = listing
        self.stale = stale
    }

    enum CodingKeys: String, CodingKey {
        case key, query, posts, after, before, stale
        case fetchedAt = "fetched_at"
    }

    public init(from decoder: any Decoder) throws {
        listing = try CachedListing(from: decoder)
        stale = try decoder.container(keyedBy: CodingKeys.self).decode(Bool.self, forKey: .stale)
    }

    public func encode(to encoder: any Encoder) throws {
        try listing.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(stale, forKey: .stale)
    }
}
