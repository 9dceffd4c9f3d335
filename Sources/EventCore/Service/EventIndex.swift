/// The value of the retained topic `events.index`: every event's id and topic key, and the ids
/// filed under each category (sorted by start), with counts. A restart restores the index
/// first, then `events.item.<key>` for each key it lists.
public struct EventIndex: Codable, Equatable, Sendable {
    /// How many events there are.
    public var count: Int
    /// Every event, sorted by start then id.
    public var events: [Entry]
    /// Each category with its events' ids, sorted by category.
    public var categories: [Category]

    /// One event of the index: its id and the key of its `events.item.<key>` topic.
    public struct Entry: Codable, Equatable, Sendable {
        public var id: String
        public var key: String
    }

    /// A category, its count and its events' ids.
    public struct Category: Codable, Equatable, Sendable {
        public var category: String
        public var count: Int
        public var ids: [String]
    }

    /// The index of `items` (by topic key).
    init(_ items: [String: EventItem]) {
        let sorted = items.sorted { Events.startOrder($0.value.event, $1.value.event) }
        count = sorted.count
        events = sorted.map { Entry(id: $0.value.event.id, key: $0.key) }
        var byCategory: [String: [String]] = [:]
        for (_, item) in sorted {
            for category in item.event.categories { byCategory[category, default: []].append(item.event.id) }
        }
        categories = byCategory.keys.sorted().map { Category(category: $0, count: byCategory[$0]!.count, ids: byCategory[$0]!) }
    }
}
