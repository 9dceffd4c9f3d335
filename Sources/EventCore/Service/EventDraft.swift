import Foundation

/// The payload of `create`: an event without id or counts.
///
/// `{"title", "starts_at", "ends_at"?, "all_day"?, "time_zone"?, "description"?, "categories"?,
/// "location"? {"name", "lat"?, "lon"?}, "url"?, "status"?, "capacity"?}`. Without `ends_at` a
/// timed event lasts one hour and an all-day event one day.
public struct EventDraft: Decodable, Equatable, Sendable {
    public var title: String
    public var description: String?
    public var categories: [String]
    public var startsAt: Date
    public var endsAt: Date?
    public var allDay: Bool
    public var timeZone: String?
    public var location: EventLocation?
    public var url: String?
    public var status: EventStatus
    public var capacity: Int?

    /// Creates a draft.
    public init(
        title: String, description: String? = nil, categories: [String] = [], startsAt: Date, endsAt: Date? = nil, allDay: Bool = false,
        timeZone: String? = nil, location: EventLocation? = nil, url: String? = nil, status: EventStatus = .scheduled, capacity: Int? = nil
    ) {
        self.title = title
        self.description = description
        self.categories = categories
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.allDay = allDay
        self.timeZone = timeZone
        self.location = location
        self.url = url
        self.status = status
        self.capacity = capacity
    }

    enum CodingKeys: String, CodingKey {
        case title, description, categories, location, url, status, capacity
        case startsAt = "starts_at"
        case endsAt = "ends_at"
        case allDay = "all_day"
        case timeZone = "time_zone"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let startsAt = try WireInstant.decode(container, .startsAt) else {
            throw DecodingError.keyNotFound(CodingKeys.startsAt, .init(codingPath: container.codingPath, debugDescription: "starts_at is required"))
        }
        self.init(
            title: try container.decode(String.self, forKey: .title),
            description: try container.decodeIfPresent(String.self, forKey: .description),
            categories: try container.decodeIfPresent([String].self, forKey: .categories) ?? [],
            startsAt: startsAt, endsAt: try WireInstant.decode(container, .endsAt),
            allDay: try container.decodeIfPresent(Bool.self, forKey: .allDay) ?? false,
            timeZone: try container.decodeIfPresent(String.self, forKey: .timeZone),
            location: try container.decodeIfPresent(EventLocation.self, forKey: .location),
            url: try container.decodeIfPresent(String.self, forKey: .url),
            status: try container.decodeIfPresent(EventStatus.self, forKey: .status) ?? .scheduled,
            capacity: try container.decodeIfPresent(Int.self, forKey: .capacity))
    }
}
