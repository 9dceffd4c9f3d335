import Bus
import Foundation
import ServiceKit
import ServiceKitTesting

@testable import EventCore

/// Builds test stores of the `events` feature with the service's topics and middleware.
@MainActor
enum EventsStore {
    static let now = Fixture.instant("2025-03-01T12:00:00Z")

    /// A timed event on 2025-03-01 evening (after ``now``).
    static func event(_ id: String, capacity: Int? = nil, categories: [String] = ["music"]) -> Event {
        Event(
            id: id, uid: id, title: "Event \(id)", categories: categories, startsAt: Fixture.instant("2025-03-01T20:00:00Z"),
            endsAt: Fixture.instant("2025-03-01T23:00:00Z"), capacity: capacity)
    }

    static func state(_ items: [EventItem], user: String? = "alice") -> Events.State {
        var state = Events.State()
        for item in items { state.items[TopicKey.make(item.event.id)] = item }
        state.user = user
        return state
    }

    static func make(_ state: Events.State, feature: Events = Events()) -> TestStore<Events> {
        TestStore(
            feature, initialState: state, stateTopics: Events.stateTopics, middleware: [Events.invariant, Events.closedEvents, Events.sizeLimit])
    }
}
