extension KeyedDecodingContainer {
    /// The value, or `fallback` when the key is absent or null: Reddit leaves fields out of some
    /// views of a thing (a comment in a user's listing has no `depth`), and one missing field
    /// must not lose the whole listing.
    func value<T: Decodable>(_ key: Key, or fallback: T) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? fallback
    }

    /// `edited`: `false`, or the edit time in seconds since 1970.
    func editedTime(_ key: Key) throws -> Double? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let flag = try? decode(Bool.self, forKey: key) {
            guard !flag else {
                throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "edited is true without a time")
            }
            return nil
        }
        return try decode(Double.self, forKey: key)
    }

    /// `replies`: `""` when there are none, else a listing.
    func replies<Item: ListingItem>(_ key: Key) throws -> Listing<Item>? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) {
            guard text.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "replies is a non-empty string")
            }
            return nil
        }
        return try decode(Listing<Item>.self, forKey: key)
    }
}
