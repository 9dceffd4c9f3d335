import Bus
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

@testable import EventCore

/// create, update, cancel and the invariant middleware (TestStore).
@MainActor
struct EventsEditingTests {
    @Test func create_storesTheEvent_publishes_andBadDraftsAre400() async {
        let store = EventsStore.make(EventsStore.state([]))
        let draft = EventDraft(
            title: "Quiz", categories: ["Pub Quiz", "Games"], startsAt: Fixture.instant("2025-03-05T19:00:00Z"), timeZone: "Europe/Zurich",
            location: EventLocation(name: "The Pub", lat: 47.37, lon: 8.54), capacity: 30)
        let expected = Event(
            id: "q1@events.swiftbus", uid: "q1@events.swiftbus", title: "Quiz", categories: ["pub-quiz", "games"],
            startsAt: Fixture.instant("2025-03-05T19:00:00Z"), endsAt: Fixture.instant("2025-03-05T20:00:00Z"), timeZone: "Europe/Zurich",
            location: EventLocation(name: "The Pub", lat: 47.37, lon: 8.54), capacity: 30)
        let key = TopicKey.make("q1@events.swiftbus")
        let created = await store.send(request: { .createRequested($0, draft, id: "q1@events.swiftbus") }) {
            $0.items[key] = EventItem(event: expected)
        }
        store.expectPublish("events.created", EventsChange.Changed(ids: ["q1@events.swiftbus"], cause: "create"))
        store.expectReply(created, expected)
        #expect(store.statePublishes.map(\.topic).contains("events.item.\(key)"))

        var backwards = draft
        backwards.endsAt = Fixture.instant("2025-03-05T18:00:00Z")
        let bad = await store.send(request: { .createRequested($0, backwards, id: "q2") })
        store.expectFailure(bad, status: 400, code: "bad_request")
        let taken = await store.send(request: { .createRequested($0, draft, id: "q1@events.swiftbus") })
        store.expectFailure(taken, status: 409, code: "conflict")
        await store.finish()
    }

    @Test func cancel_withGoingUsers_keepsThemListed_publishesThem_andClosesTheEvent() async {
        let store = EventsStore.make(
            EventsStore.state([EventItem(event: EventsStore.event("gig", capacity: 1), going: ["bob"], waitlist: ["carol"])]))
        let cancelled = await store.send(request: { .cancelRequested($0, id: "gig") }) {
            $0.items["gig"]!.event.status = .cancelled
            $0.items["gig"]!.event.sequence = 1
        }
        store.expectPublish("events.cancelled", EventsChange.Cancelled(id: "gig", going: ["bob"], waitlist: ["carol"]))
        store.expectReply(cancelled, store.state.items["gig"]!.event)

        // Cancelling twice changes nothing; nobody can join; bob leaving promotes nobody.
        let twice = await store.send(request: { .cancelRequested($0, id: "gig") })
        store.expectReply(twice, store.state.items["gig"]!.event)
        let join = await store.send(request: { .rsvpRequested($0, id: "gig", going: true, now: EventsStore.now) })
        store.expectFailure(join, status: 409, code: "event_cancelled")
        await store.send(.authChanged(user: "bob")) { $0.user = "bob" }
        let leave = await store.send(request: { .rsvpRequested($0, id: "gig", going: false, now: EventsStore.now) }) {
            $0.items["gig"]!.going = []
            $0.items["gig"]!.event.goingCount = 0
        }
        store.expectPublish(
            "events.rsvp.changed",
            EventsChange.RSVPChanged(id: "gig", user: "bob", status: "not_going", promoted: [], goingCount: 0, waitlistCount: 1))
        store.expectReply(
            leave, EventsReply.RSVP(id: "gig", user: "bob", status: "not_going", waitlistPosition: nil, goingCount: 0, waitlistCount: 1, capacity: 1))
        await store.finish()
    }

    @Test func update_belowTheGoingCount_isRefusedByTheInvariant_andRaisingItPromotes() async {
        let item = EventItem(event: EventsStore.event("gig", capacity: 2), going: ["alice", "bob"], waitlist: ["carol"])
        let store = EventsStore.make(EventsStore.state([item]))
        var shrink = EventPatch(id: "gig")
        shrink.capacity = .some(1)
        let refused = await store.send(request: { .updateRequested($0, shrink, now: EventsStore.now) })
        store.expectFailure(refused, status: 409, code: "invariant_violated")
        #expect(store.lastRefusal?.message == "'gig' would have 2 people going for 1 places")

        var grow = EventPatch(id: "gig")
        grow.capacity = .some(nil)
        let grown = await store.send(request: { .updateRequested($0, grow, now: EventsStore.now) }) {
            $0.items["gig"]!.event.capacity = nil
            $0.items["gig"]!.event.sequence = 1
            $0.items["gig"]!.going = ["alice", "bob", "carol"]
            $0.items["gig"]!.waitlist = []
            $0.items["gig"]!.event.goingCount = 3
            $0.items["gig"]!.event.waitlistCount = 0
        }
        store.expectPublish("events.updated", EventsChange.Changed(ids: ["gig"], cause: "update"))
        store.expectPublish(
            "events.rsvp.changed", EventsChange.RSVPChanged(id: "gig", user: "carol", status: "going", promoted: [], goingCount: 3, waitlistCount: 0))
        store.expectReply(grown, store.state.items["gig"]!.event)
        await store.finish()
    }

    @Test func create_ofAnEventTooLargeForItsTopic_isRefused413() async {
        let store = EventsStore.make(EventsStore.state([]))
        let draft = EventDraft(
            title: "Huge", description: String(repeating: "x", count: 1_100_000), startsAt: Fixture.instant("2025-03-05T19:00:00Z"))
        let id = await store.send(request: { .createRequested($0, draft, id: "huge") })
        store.expectFailure(id, status: 413, code: "too_large")
        #expect(store.lastRefusal?.message.hasPrefix("'huge' would take 1100") == true)
        await store.finish()
    }

    @Test func invariantCheck_findsEachKindOfBrokenState() {
        func broken(_ change: (inout EventItem) -> Void) -> String? {
            var item = EventItem(event: EventsStore.event("gig", capacity: 2), likedBy: ["a"], going: ["a"], waitlist: [])
            change(&item)
            return Events.check(EventsStore.state([item]))
        }
        #expect(broken { _ in } == nil)
        #expect(broken { $0.event.likeCount = 5 } == "like_count of 'gig' does not match its likes")
        #expect(broken { $0.going.append("b") } == "going_count of 'gig' does not match its going list")
        #expect(
            broken {
                $0.waitlist = ["a"]; $0.syncCounts()
            } == "someone is on the lists of 'gig' twice")
        #expect(
            broken {
                $0.going = ["a", "b", "c"]; $0.syncCounts()
            } == "'gig' would have 3 people going for 2 places")
        var misfiled = EventsStore.state([])
        misfiled.items["elsewhere"] = EventItem(event: EventsStore.event("gig"))
        #expect(Events.check(misfiled) == "'gig' is stored under the topic key 'elsewhere'")
    }

    @Test func list_filtersByCategoryTimeTextAndPast_sortsByStart_andCountsCategories() async {
        var early = EventsStore.event("early", categories: ["music", "outdoors"])
        early.startsAt = Fixture.instant("2025-03-01T18:00:00Z")
        var past = EventsStore.event("past", categories: ["music"])
        past.startsAt = Fixture.instant("2025-02-01T18:00:00Z")
        past.endsAt = Fixture.instant("2025-02-01T20:00:00Z")
        var quiz = EventsStore.event("quiz", categories: ["games"])
        quiz.title = "Pub quiz"
        let store = EventsStore.make(EventsStore.state([EventItem(event: early), EventItem(event: past), EventItem(event: quiz)]))
        let all = await store.send(request: { .listRequested($0, EventListQuery(), now: EventsStore.now) })
        store.expectReply(
            all,
            EventsReply.List(
                count: 2, events: [early, quiz],
                categories: [.init(category: "games", count: 1), .init(category: "music", count: 1), .init(category: "outdoors", count: 1)]))
        let music = await store.send(request: { .listRequested($0, EventListQuery(category: "Music", includePast: true), now: EventsStore.now) })
        store.expectReply(
            music,
            EventsReply.List(
                count: 2, events: [past, early],
                categories: [.init(category: "games", count: 1), .init(category: "music", count: 2), .init(category: "outdoors", count: 1)]))
        let text = await store.send(request: { .listRequested($0, EventListQuery(query: "QUIZ"), now: EventsStore.now) })
        store.expectReply(text, EventsReply.List(count: 1, events: [quiz], categories: [.init(category: "games", count: 1)]))
        let window = await store.send(request: {
            .listRequested(
                $0, EventListQuery(from: Fixture.instant("2025-03-01T19:00:00Z"), to: Fixture.instant("2025-03-01T19:30:00Z")), now: EventsStore.now)
        })
        store.expectReply(
            window,
            EventsReply.List(count: 1, events: [early], categories: [.init(category: "music", count: 1), .init(category: "outdoors", count: 1)]))
        await store.finish()
    }
}
