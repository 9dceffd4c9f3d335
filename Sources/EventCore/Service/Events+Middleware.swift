import Bus
import Foundation
import ServiceKit

extension Events {
    /// The seed's logging middleware: each action's case name, its size (the characters of
    /// the action as text: an import's calendar makes it large), the cause, the reducer time and
    /// the number of events after it. Actions here carry no secret (the user comes from
    /// `auth.state`, never a password or a token), but the payload itself is not logged.
    public static func logging(_ logger: Logger, level: Logger.Level = .debug) -> Middleware<Events> {
        Middleware("logging") { record in
            logger.log(
                level, "\(record.name)",
                metadata: [
                    "size": String(String(describing: record.action).utf8.count), "cause": record.cause.description,
                    "reducer_us": String(record.duration.components.seconds * 1_000_000 + record.duration.components.attoseconds / 1_000_000_000_000),
                    "events": String(record.after.items.count),
                ])
            return .accept
        }
    }

    /// Refuses (409 `invariant_violated`) any action after which the state is broken: counts
    /// that do not match the lists, someone twice on a list or both going and waiting, more
    /// people going than places, an event under another event's topic key.
    public static var invariant: Middleware<Events> {
        .invariant("invariant") { state in check(state).map { ServiceError(409, "invariant_violated", $0) } }
    }

    /// Refuses (409 `rsvp_closed`) any action that puts someone on the going list or the
    /// waitlist of a cancelled event, or of one that is over at the time the action carries.
    public static var closedEvents: Middleware<Events> {
        Middleware("closed-events") { record in
            let now = time(of: record.action)
            for (key, item) in record.after.items {
                let before = record.before.items[key]
                guard before != item else { continue }
                let closed = item.event.status == .cancelled || now.map { item.event.endsAt <= $0 } == true
                guard closed else { continue }
                let earlier = Set((before?.going ?? []) + (before?.waitlist ?? []))
                if let joined = (item.going + item.waitlist).first(where: { !earlier.contains($0) }) {
                    return .refuse(
                        ServiceError(
                            409, "rsvp_closed",
                            "'\(joined)' cannot join '\(item.event.id)': it is \(item.event.status == .cancelled ? "cancelled" : "over")"))
                }
            }
            return .accept
        }
    }

    /// The largest value a state topic may carry: the kit publishes nothing over the bus's
    /// 1 MiB message limit (less room for the topic and meta), so a larger one would be lost at
    /// the next restart. Kept a little under the kit's bound.
    static let maxTopicBytes = 1_000_000

    /// Refuses (413 `too_large`) any action after which a changed event's topic or the index
    /// would be over ``maxTopicBytes``: it could not be saved.
    public static var sizeLimit: Middleware<Events> {
        Middleware("size-limit") { record in
            guard record.before.items != record.after.items else { return .accept }
            let encoder = JSONEncoder()
            for (key, item) in record.after.items where record.before.items[key] != item {
                let size = (try? encoder.encode(item).count) ?? 0
                if size > maxTopicBytes {
                    return .refuse(
                        ServiceError(413, "too_large", "'\(item.event.id)' would take \(size) bytes, over the \(maxTopicBytes) a topic may hold"))
                }
            }
            let index = (try? encoder.encode(EventIndex(record.after.items)).count) ?? 0
            if index > maxTopicBytes {
                return .refuse(
                    ServiceError(
                        413, "too_large",
                        "events.index would take \(index) bytes for \(record.after.items.count) events, over the \(maxTopicBytes) a topic may hold"))
            }
            return .accept
        }
    }

    /// What is broken in `state`, or nil.
    static func check(_ state: State) -> String? {
        for (key, item) in state.items {
            let id = item.event.id
            if TopicKey.make(id) != key { return "'\(id)' is stored under the topic key '\(key)'" }
            if item.event.likeCount != item.likedBy.count { return "like_count of '\(id)' does not match its likes" }
            if item.event.goingCount != item.going.count { return "going_count of '\(id)' does not match its going list" }
            if item.event.waitlistCount != item.waitlist.count { return "waitlist_count of '\(id)' does not match its waitlist" }
            if Set(item.likedBy).count != item.likedBy.count { return "someone liked '\(id)' twice" }
            let people = item.going + item.waitlist
            if Set(people).count != people.count { return "someone is on the lists of '\(id)' twice" }
            if let capacity = item.event.capacity, item.going.count > capacity {
                return "'\(id)' would have \(item.going.count) people going for \(capacity) places"
            }
        }
        return nil
    }
}
