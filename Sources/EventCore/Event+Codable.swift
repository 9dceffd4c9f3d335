import Foundation

extension Event {
    enum CodingKeys: String, CodingKey {
        case id, uid, sequence, title, description, categories, location, url, status, capacity
        case recurrenceID = "recurrence_id"
        case startsAt = "starts_at"
        case endsAt = "ends_at"
        case allDay = "all_day"
        case timeZone = "time_zone"
        case likeCount = "like_count"
        case goingCount = "going_count"
        case waitlistCount = "waitlist_count"
    }

    /// Decodes an event; instants must be ISO 8601 UTC strings with whole seconds.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            uid: try container.decode(String.self, forKey: .uid),
            recurrenceID: try Self.decodeInstantIfPresent(container, .recurrenceID),
            sequence: try container.decode(Int.self, forKey: .sequence),
            title: try container.decode(String.self, forKey: .title),
            description: try container.decodeIfPresent(String.self, forKey: .description),
            categories: try container.decode([String].self, forKey: .categories),
            startsAt: try Self.decodeInstant(container, .startsAt),
            endsAt: try Self.decodeInstant(container, .endsAt),
            allDay: try container.decode(Bool.self, forKey: .allDay),
            timeZone: try container.decodeIfPresent(String.self, forKey: .timeZone),
            location: try container.decodeIfPresent(EventLocation.self, forKey: .location),
            url: try container.decodeIfPresent(String.self, forKey: .url),
            status: try container.decode(EventStatus.self, forKey: .status),
            capacity: try container.decodeIfPresent(Int.self, forKey: .capacity),
            likeCount: try container.decodeIfPresent(Int.self, forKey: .likeCount) ?? 0,
            goingCount: try container.decodeIfPresent(Int.self, forKey: .goingCount) ?? 0,
            waitlistCount: try container.decodeIfPresent(Int.self, forKey: .waitlistCount) ?? 0
        )
    }

    /// Encodes the event with snake_case keys and ISO 8601 UTC instants, whatever the encoder's
    /// date strategy, so every client sees the same wire format.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(uid, forKey: .uid)
        try container.encodeIfPresent(recurrenceID.map(Self.isoString), forKey: .recurrenceID)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(title, forKey: .title)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encode(categories, forKey: .categories)
        try container.encode(Self.isoString(startsAt), forKey: .startsAt)
        try container.encode(Self.isoString(endsAt), forKey: .endsAt)
        try container.encode(allDay, forKey: .allDay)
        try container.encodeIfPresent(timeZone, forKey: .timeZone)
        try container.encodeIfPresent(location, forKey: .location)
        try container.encodeIfPresent(url, forKey: .url)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(capacity, forKey: .capacity)
        try container.encode(likeCount, forKey: .likeCount)
        try container.encode(goingCount, forKey: .goingCount)
        try container.encode(waitlistCount, forKey: .waitlistCount)
    }

    static func isoString(_ date: Date) -> String {
        CivilDateTime(utc: date).isoFormat + "Z"
    }

    private static func decodeInstant(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Date {
        let text = try container.decode(String.self, forKey: key)
        guard let civil = CivilDateTime(isoFormat: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "'\(text)' is not an ISO 8601 UTC instant like 2025-03-01T12:00:00Z")
        }
        return civil.utcInstant
    }

    private static func decodeInstantIfPresent(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Date? {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        return try decodeInstant(container, key)
    }
}
