/// The value of `events.user.<key>` (one per user who liked or joined anything) and of
/// `events.me` (the signed-in user, `user` null and empty lists when nobody is): the ids the
/// user liked, goes to and waits for, each sorted by the event's start.
public struct UserEvents: Codable, Equatable, Sendable {
    public var user: String?
    public var liked: [String]
    public var going: [String]
    public var waitlisted: [String]

    /// The lists of `user` in `items` (all empty for nil).
    init(user: String?, items: [String: EventItem]) {
        self.user = user
        var liked: [Event] = []
        var going: [Event] = []
        var waitlisted: [Event] = []
        if let user {
            for item in items.values {
                if item.likedBy.contains(user) { liked.append(item.event) }
                if item.going.contains(user) { going.append(item.event) }
                if item.waitlist.contains(user) { waitlisted.append(item.event) }
            }
        }
        self.liked = liked.sorted(by: Events.startOrder).map(\.id)
        self.going = going.sorted(by: Events.startOrder).map(\.id)
        self.waitlisted = waitlisted.sorted(by: Events.startOrder).map(\.id)
    }
}
