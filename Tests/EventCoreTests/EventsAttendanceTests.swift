import Bus
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

@testable import EventCore

/// Likes and RSVPs through the feature's reducer and middleware (TestStore).
@MainActor
struct EventsAttendanceTests {
    @Test func like_thenUnlike_countsPublishesAndIsIdempotent() async {
        let store = EventsStore.make(EventsStore.state([EventItem(event: EventsStore.event("jazz"))]))
        let liked = await store.send(request: { .likeRequested($0, id: "jazz", like: true) }) {
            $0.items["jazz"]!.likedBy = ["alice"]
            $0.items["jazz"]!.event.likeCount = 1
        }
        store.expectPublish("events.liked", EventsChange.Liked(id: "jazz", user: "alice", liked: true, likeCount: 1))
        store.expectReply(liked, EventsReply.Like(id: "jazz", user: "alice", liked: true, likeCount: 1))
        #expect(store.statePublishes.map(\.topic).contains("events.user.alice"))

        let again = await store.send(request: { .likeRequested($0, id: "jazz", like: true) })
        store.expectReply(again, EventsReply.Like(id: "jazz", user: "alice", liked: true, likeCount: 1))

        await store.send(.authChanged(user: "bob")) { $0.user = "bob" }
        let bob = await store.send(request: { .likeRequested($0, id: "jazz", like: true) }) {
            $0.items["jazz"]!.likedBy = ["alice", "bob"]
            $0.items["jazz"]!.event.likeCount = 2
        }
        store.expectPublish("events.liked", EventsChange.Liked(id: "jazz", user: "bob", liked: true, likeCount: 2))
        store.expectReply(bob, EventsReply.Like(id: "jazz", user: "bob", liked: true, likeCount: 2))

        let unliked = await store.send(request: { .likeRequested($0, id: "jazz", like: false) }) {
            $0.items["jazz"]!.likedBy = ["alice"]
            $0.items["jazz"]!.event.likeCount = 1
        }
        store.expectPublish("events.liked", EventsChange.Liked(id: "jazz", user: "bob", liked: false, likeCount: 1))
        store.expectReply(unliked, EventsReply.Like(id: "jazz", user: "bob", liked: false, likeCount: 1))
        await store.finish()
    }

    @Test func like_whenSignedOut_is403_andUnknownEventIs404() async {
        let store = EventsStore.make(EventsStore.state([EventItem(event: EventsStore.event("jazz"))], user: nil))
        let signedOut = await store.send(request: { .likeRequested($0, id: "jazz", like: true) })
        store.expectFailure(signedOut, status: 403, code: "signed_out")
        let mine = await store.send(request: { .mineRequested($0) })
        store.expectFailure(mine, status: 403, code: "signed_out")
        await store.send(.authChanged(user: "alice")) { $0.user = "alice" }
        let missing = await store.send(request: { .likeRequested($0, id: "nope", like: true) })
        store.expectFailure(missing, status: 404, code: "not_found")
        await store.finish()
    }

    @Test func rsvp_overCapacity_waitlists_andLeavingPromotesInOrder() async {
        let now = EventsStore.now
        let store = EventsStore.make(EventsStore.state([EventItem(event: EventsStore.event("gig", capacity: 1))]))
        let alice = await store.send(request: { .rsvpRequested($0, id: "gig", going: true, now: now) }) {
            $0.items["gig"]!.going = ["alice"]
            $0.items["gig"]!.event.goingCount = 1
        }
        store.expectPublish(
            "events.rsvp.changed", EventsChange.RSVPChanged(id: "gig", user: "alice", status: "going", promoted: [], goingCount: 1, waitlistCount: 0))
        store.expectReply(
            alice, EventsReply.RSVP(id: "gig", user: "alice", status: "going", waitlistPosition: nil, goingCount: 1, waitlistCount: 0, capacity: 1))

        for (index, user) in ["bob", "carol"].enumerated() {
            await store.send(.authChanged(user: user)) { $0.user = user }
            let id = await store.send(request: { .rsvpRequested($0, id: "gig", going: true, now: now) }) {
                $0.items["gig"]!.waitlist.append(user)
                $0.items["gig"]!.event.waitlistCount = index + 1
            }
            store.expectPublish(
                "events.rsvp.changed",
                EventsChange.RSVPChanged(id: "gig", user: user, status: "waitlisted", promoted: [], goingCount: 1, waitlistCount: index + 1))
            store.expectReply(
                id,
                EventsReply.RSVP(
                    id: "gig", user: user, status: "waitlisted", waitlistPosition: index + 1, goingCount: 1, waitlistCount: index + 1, capacity: 1))
        }

        // Alice leaves: bob, first on the waitlist, takes her place; carol moves up to first.
        await store.send(.authChanged(user: "alice")) { $0.user = "alice" }
        let left = await store.send(request: { .rsvpRequested($0, id: "gig", going: false, now: now) }) {
            $0.items["gig"]!.going = ["bob"]
            $0.items["gig"]!.waitlist = ["carol"]
            $0.items["gig"]!.event.waitlistCount = 1
        }
        store.expectPublish(
            "events.rsvp.changed",
            EventsChange.RSVPChanged(id: "gig", user: "alice", status: "not_going", promoted: ["bob"], goingCount: 1, waitlistCount: 1))
        store.expectPublish(
            "events.rsvp.changed", EventsChange.RSVPChanged(id: "gig", user: "bob", status: "going", promoted: [], goingCount: 1, waitlistCount: 1))
        store.expectReply(
            left, EventsReply.RSVP(id: "gig", user: "alice", status: "not_going", waitlistPosition: nil, goingCount: 1, waitlistCount: 1, capacity: 1)
        )

        // Carol, waiting, sees herself first in line in `mine`.
        await store.send(.authChanged(user: "carol")) { $0.user = "carol" }
        let mine = await store.send(request: { .mineRequested($0) })
        store.expectReply(mine, EventsReply.Mine(user: "carol", liked: [], going: [], waitlisted: [store.state.items["gig"]!.event]))
        await store.finish()
    }

    @Test func rsvp_onCancelledOrPastEvent_isRefused_butLeavingWorks() async {
        var cancelled = EventsStore.event("off")
        cancelled.status = .cancelled
        let store = EventsStore.make(EventsStore.state([EventItem(event: cancelled, going: ["bob"]), EventItem(event: EventsStore.event("gig"))]))
        let join = await store.send(request: { .rsvpRequested($0, id: "off", going: true, now: EventsStore.now) })
        store.expectFailure(join, status: 409, code: "event_cancelled")
        let late = await store.send(request: { .rsvpRequested($0, id: "gig", going: true, now: Fixture.instant("2025-03-02T00:00:00Z")) })
        store.expectFailure(late, status: 409, code: "event_past")

        await store.send(.authChanged(user: "bob")) { $0.user = "bob" }
        let leave = await store.send(request: { .rsvpRequested($0, id: "off", going: false, now: EventsStore.now) }) {
            $0.items["off"]!.going = []
            $0.items["off"]!.event.goingCount = 0
        }
        store.expectPublish(
            "events.rsvp.changed",
            EventsChange.RSVPChanged(id: "off", user: "bob", status: "not_going", promoted: [], goingCount: 0, waitlistCount: 0))
        store.expectReply(
            leave,
            EventsReply.RSVP(id: "off", user: "bob", status: "not_going", waitlistPosition: nil, goingCount: 0, waitlistCount: 0, capacity: nil))
        await store.finish()
    }
}
