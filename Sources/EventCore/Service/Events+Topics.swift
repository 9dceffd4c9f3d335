import ServiceKit

extension Events {
    /// The retained state topics, in restore order: the index first (it lists the item keys),
    /// then one topic per event, one per user, and the signed-in user's lists.
    /// - `events.index`: ``EventIndex``.
    /// - `events.item.<key>`: ``EventItem`` (the event, who liked it, going list, waitlist).
    /// - `events.user.<key>`: ``UserEvents`` of each user with a like, a place or a wait.
    /// - `events.me`: ``UserEvents`` of the signed-in user; not restored (auth is its truth).
    public static var stateTopics: [StateTopic<State>] {
        [
            .value(
                "events.index", { EventIndex($0.items) },
                restore: { state, index in
                    state.restored = true
                    state.restoring = index.events.map(\.key)
                }),
            .family(
                "events.item", keys: { Array(Set($0.items.keys).union($0.restoring)).sorted() }, value: { $0.items[$1] },
                restore: { state, key, item in
                    // The counts are the lists' sizes; a saved item is read back with them so.
                    var item = item
                    item.syncCounts()
                    state.items[key] = item
                }),
            .family(
                "events.user", keys: { users(in: $0).keys.sorted() },
                value: { state, key in users(in: state)[key].map { UserEvents(user: $0, items: state.items) } }),
            .value("events.me", { UserEvents(user: $0.user, items: $0.items) }),
        ]
    }

    /// Every user on a list, by topic key.
    static func users(in state: State) -> [String: String] {
        var users: [String: String] = [:]
        for item in state.items.values {
            for user in item.likedBy + item.going + item.waitlist { users[TopicKey.make(user)] = user }
        }
        return users
    }
}
