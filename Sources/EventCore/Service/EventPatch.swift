import Foundation

/// The payload of `update`: the id and the fields to change; a field left out keeps its value.
/// `"capacity": null` removes the limit. Status `cancelled` is the `cancel` method's.
public struct EventPatch: Decodable, Equatable, Sendable {
    public var id: String
    public var title: String?
    public var description: String?
    public var categories: [String]?
    public var startsAt: Date?
    public var endsAt: Date?
    public var timeZone: String?
    public var location: EventLocation?
    public var url: String?
    public var status: EventStatus?
    /// nil: unchanged; `.some(nil)`: no limit; `.some(n)`: n places.
    public var capacity: Int??

    /// Creates a patch that changes nothing yet.
    public init(id: String) { self.id = id }

    enum CodingKeys: String, CodingKey {
        case id, title, description, categories, location, url, status, capacity
        case startsAt = "starts_at"
        case endsAt = "ends_at"
        case timeZone = "time_zone"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        categories = try container.decodeIfPresent([String].self, forKey: .categories)
        startsAt = try WireInstant.decode(container, .startsAt)
        endsAt = try WireInstant.decode(container, .endsAt)
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone)
        location = try container.decodeIfPresent(EventLocation.self, forKey: .location)
        url = try container.decodeIfPresent(String.self, forKey: .url)
        status = try container.decodeIfPresent(EventStatus.self, forKey: .status)
        if container.contains(.capacity) {
            capacity = .some(try container.decodeIfPresent(Int.self, forKey: .capacity))
        }
    }
}
