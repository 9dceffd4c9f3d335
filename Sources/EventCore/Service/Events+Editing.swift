import Bus
import Foundation
import ServiceKit

extension Events {
    func create(_ state: inout State, _ id: RequestID, _ draft: EventDraft, eventID: String) -> Effect<Action> {
        guard state.user != nil else { return .fail(id, Self.signedOut) }
        let key = TopicKey.make(eventID)
        guard state.items[key] == nil else {
            return .fail(id, .conflict("the event id '\(eventID)' is taken (or shares its topic key '\(key)' with another event)"))
        }
        let defaultLength: TimeInterval = draft.allDay ? 86_400 : 3600
        var event = Event(
            id: eventID, uid: eventID, title: draft.title, description: draft.description, categories: CategorySlug.make(draft.categories),
            startsAt: draft.startsAt, endsAt: draft.endsAt ?? draft.startsAt.addingTimeInterval(defaultLength), allDay: draft.allDay,
            timeZone: draft.timeZone, location: draft.location, url: draft.url, status: draft.status, capacity: draft.capacity)
        if draft.allDay { event.timeZone = nil }
        if let problem = Self.problem(with: event) { return .fail(id, .badRequest(problem)) }
        state.items[key] = EventItem(event: event)
        return .merge(
            .publish("events.created", EventsChange.Changed(ids: [eventID], cause: "create")),
            .reply(id, event))
    }

    func update(_ state: inout State, _ id: RequestID, _ patch: EventPatch, now: Date) -> Effect<Action> {
        guard state.user != nil else { return .fail(id, Self.signedOut) }
        guard let key = Self.key(of: patch.id, in: state) else { return .fail(id, Self.notFound(patch.id)) }
        guard patch.status != .cancelled else { return .fail(id, .badRequest("to cancel an event, call 'cancel'")) }
        var item = state.items[key]!
        let before = item.event
        if let title = patch.title { item.event.title = title }
        if let description = patch.description { item.event.description = description }
        if let categories = patch.categories { item.event.categories = CategorySlug.make(categories) }
        if let startsAt = patch.startsAt { item.event.startsAt = startsAt }
        if let endsAt = patch.endsAt { item.event.endsAt = endsAt }
        if let timeZone = patch.timeZone { item.event.timeZone = timeZone }
        if let location = patch.location { item.event.location = location }
        if let url = patch.url { item.event.url = url }
        if let status = patch.status { item.event.status = status }
        if let capacity = patch.capacity { item.event.capacity = capacity }
        if let problem = Self.problem(with: item.event) { return .fail(id, .badRequest(problem)) }
        guard item.event != before else { return .reply(id, item.event) }
        item.event.sequence += 1
        // More places (or no limit) let the waitlist move up; fewer places than people going is
        // refused by the invariant, not resolved by dropping anyone.
        let promoted = item.promote(at: now)
        state.items[key] = item
        var effects: [Effect<Action>] = [.publish("events.updated", EventsChange.Changed(ids: [patch.id], cause: "update"))]
        for user in promoted {
            effects.append(.publish("events.rsvp.changed", Self.rsvpChange(item, user: user, status: "going", promoted: [])))
        }
        effects.append(.reply(id, item.event))
        return .merge(effects)
    }

    func cancel(_ state: inout State, _ id: RequestID, _ eventID: String) -> Effect<Action> {
        guard state.user != nil else { return .fail(id, Self.signedOut) }
        guard let key = Self.key(of: eventID, in: state) else { return .fail(id, Self.notFound(eventID)) }
        var item = state.items[key]!
        guard item.event.status != .cancelled else { return .reply(id, item.event) }
        item.event.status = .cancelled
        item.event.sequence += 1
        state.items[key] = item
        return .merge(
            .publish("events.cancelled", EventsChange.Cancelled(id: eventID, going: item.going, waitlist: item.waitlist)),
            .reply(id, item.event))
    }

    /// What makes `event` unfit to store, for a person to fix; nil when it is fine.
    static func problem(with event: Event) -> String? {
        if event.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return "the title is empty" }
        if event.endsAt < event.startsAt { return "ends_at is before starts_at" }
        if event.allDay {
            let midnight = { (date: Date) in Int(date.timeIntervalSince1970) % 86_400 == 0 }
            if !midnight(event.startsAt) || !midnight(event.endsAt) || event.endsAt == event.startsAt {
                return "an all-day event starts and ends at UTC midnights (ends_at is the day after the last day)"
            }
        }
        if event.allDay && event.timeZone != nil { return "an all-day event has no time zone (its dates float)" }
        if let zone = event.timeZone, TimeZone(identifier: zone) == nil { return "unknown time zone '\(zone)' (an IANA name like Europe/Zurich)" }
        if let capacity = event.capacity, capacity < 1 { return "capacity must be at least 1, or left out for no limit" }
        if let location = event.location {
            if let lat = location.lat, !(-90...90).contains(lat) { return "location.lat \(lat) is not between -90 and 90" }
            if let lon = location.lon, !(-180...180).contains(lon) { return "location.lon \(lon) is not between -180 and 180" }
            if (location.lat == nil) != (location.lon == nil) { return "location needs both lat and lon, or neither" }
        }
        if let url = event.url, URL(string: url)?.scheme == nil { return "url '\(url)' is not an absolute URL" }
        return nil
    }
}
