import Bus
import Foundation
import ServiceKit

extension Events {
    /// The seed's `bookmarkEvent`: like or unlike as the signed-in user; doing it twice changes
    /// nothing and publishes nothing.
    func like(_ state: inout State, _ id: RequestID, _ eventID: String, like: Bool) -> Effect<Action> {
        guard let user = state.user else { return .fail(id, Self.signedOut) }
        guard let key = Self.key(of: eventID, in: state) else { return .fail(id, Self.notFound(eventID)) }
        var item = state.items[key]!
        let has = item.likedBy.contains(user)
        let reply = { (item: EventItem) in EventsReply.Like(id: eventID, user: user, liked: like, likeCount: item.likedBy.count) }
        guard has != like else { return .reply(id, reply(item)) }
        if like {
            item.likedBy.insert(user, at: item.likedBy.firstIndex { $0 > user } ?? item.likedBy.endIndex)
        } else {
            item.likedBy.removeAll { $0 == user }
        }
        item.syncCounts()
        state.items[key] = item
        return .merge(
            .publish("events.liked", EventsChange.Liked(id: eventID, user: user, liked: like, likeCount: item.likedBy.count)),
            .reply(id, reply(item)))
    }

    /// Joins (`going`: true) or leaves as the signed-in user. Joining a full event puts the user
    /// on the waitlist; leaving gives the place to the first one waiting. A cancelled or past
    /// event can be left but not joined (409 `event_cancelled`, `event_past`).
    func rsvp(_ state: inout State, _ id: RequestID, _ eventID: String, going: Bool, now: Date) -> Effect<Action> {
        guard let user = state.user else { return .fail(id, Self.signedOut) }
        guard let key = Self.key(of: eventID, in: state) else { return .fail(id, Self.notFound(eventID)) }
        var item = state.items[key]!
        let wasIn = item.going.contains(user) || item.waitlist.contains(user)
        var promoted: [String] = []
        if going {
            if !wasIn {
                if item.event.status == .cancelled { return .fail(id, ServiceError(409, "event_cancelled", "'\(eventID)' is cancelled")) }
                if item.event.endsAt <= now { return .fail(id, ServiceError(409, "event_past", "'\(eventID)' is over")) }
                if item.hasRoom { item.going.append(user) } else { item.waitlist.append(user) }
            }
        } else if wasIn {
            item.going.removeAll { $0 == user }
            item.waitlist.removeAll { $0 == user }
            promoted = item.promote(at: now)
        }
        item.syncCounts()
        state.items[key] = item
        let status = Self.status(of: user, in: item)
        let reply = EventsReply.RSVP(
            id: eventID, user: user, status: status, waitlistPosition: item.waitlist.firstIndex(of: user).map { $0 + 1 },
            goingCount: item.going.count, waitlistCount: item.waitlist.count, capacity: item.event.capacity)
        guard going != wasIn else { return .reply(id, reply) }
        var effects: [Effect<Action>] = [.publish("events.rsvp.changed", Self.rsvpChange(item, user: user, status: status, promoted: promoted))]
        for next in promoted {
            effects.append(.publish("events.rsvp.changed", Self.rsvpChange(item, user: next, status: "going", promoted: [])))
        }
        effects.append(.reply(id, reply))
        return .merge(effects)
    }

    /// `going`, `waitlisted` or `not_going`.
    static func status(of user: String, in item: EventItem) -> String {
        item.going.contains(user) ? "going" : item.waitlist.contains(user) ? "waitlisted" : "not_going"
    }

    static func rsvpChange(_ item: EventItem, user: String, status: String, promoted: [String]) -> EventsChange.RSVPChanged {
        EventsChange.RSVPChanged(
            id: item.event.id, user: user, status: status, promoted: promoted, goingCount: item.going.count,
            waitlistCount: item.waitlist.count)
    }
}
