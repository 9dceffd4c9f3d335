import Foundation

/// One event as the `events` service keeps it: the event and the people around it. It is the
/// value of the retained topic `events.item.<key>` (see ``TopicKey``), so a restart restores
/// the likes, the going list and the waitlist in their order.
public struct EventItem: Codable, Equatable, Sendable {
    /// The event; its counts always equal the lists' sizes (the invariant checks it).
    public var event: Event
    /// Who liked it, sorted.
    public var likedBy: [String]
    /// Who goes, in the order they joined.
    public var going: [String]
    /// Who waits for a place, first come first served.
    public var waitlist: [String]

    /// Creates an item; the event's counts are set from the lists.
    public init(event: Event, likedBy: [String] = [], going: [String] = [], waitlist: [String] = []) {
        self.event = event
        self.likedBy = likedBy
        self.going = going
        self.waitlist = waitlist
        syncCounts()
    }

    enum CodingKeys: String, CodingKey {
        case event, going, waitlist
        case likedBy = "liked_by"
    }

    /// Sets the event's counts from the lists.
    mutating func syncCounts() {
        event.likeCount = likedBy.count
        event.goingCount = going.count
        event.waitlistCount = waitlist.count
    }

    /// Whether nobody may join any more: cancelled, or over (ended at or before `now`).
    func isClosed(at now: Date) -> Bool {
        event.status == .cancelled || event.endsAt <= now
    }

    /// Whether `going` has room for one more.
    var hasRoom: Bool {
        event.capacity.map { going.count < $0 } ?? true
    }

    /// Moves people from the waitlist to going while there is room, unless the event is closed.
    /// - Returns: who was promoted, in order.
    mutating func promote(at now: Date) -> [String] {
        guard !isClosed(at: now) else { return [] }
        var promoted: [String] = []
        while hasRoom, !waitlist.isEmpty {
            let next = waitlist.removeFirst()
            going.append(next)
            promoted.append(next)
        }
        syncCounts()
        return promoted
    }
}
