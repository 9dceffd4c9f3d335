import Bus
import BusTestSupport
import Foundation
import Testing

/// `EventService` as a real process next to a kernel, persist and auth (local provider): the
/// acting user comes from `auth.state`, the state survives SIGKILL, and users stay apart.
@Suite(.serialized)
struct EventServiceTests {
    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("events-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }

    /// The error `body` throws, nil when it succeeds.
    func failure(_ body: () async throws -> Void) async -> BusError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? BusError ?? .reply(status: 0, code: "not_a_bus_error", message: "\(error)")
        }
    }

    @Test func signedInUsers_likeAndRSVP_surviveSIGKILL_inOrder_andSignedOutIs403() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.with { h in
            try await h.startPersist(stateDirectory: folder.appendingPathComponent("persist").path)
            _ = try await h.startLocalAuth(stateDirectory: folder.appendingPathComponent("auth"))
            try await h.registerUsers(["alice", "bob", "carol"])
            let eventsState = folder.appendingPathComponent("events")
            var events = try await h.startEvents(stateDirectory: eventsState)
            let caller = h.client(name: "tester")
            func call<T: Decodable>(_ method: String, _ body: [String: Any], as type: T.Type = T.self) async throws -> T {
                let reply = try await caller.call(
                    "events", method, payload: Array(try JSONSerialization.data(withJSONObject: body)), timeout: .seconds(10))
                guard Status.isSuccess(reply.status) else {
                    throw BusError.reply(status: reply.status, code: reply.errorBody.code, message: reply.errorBody.message)
                }
                return try JSONDecoder().decode(T.self, from: Data(reply.payload))
            }

            // Nobody signed in: 403 signed_out, whatever the payload says.
            let anonymous = await failure { let _: EventsWire.Mine = try await caller.request("events", "mine", ["user": "alice"]) }
            #expect(anonymous?.status == 403)
            #expect(anonymous == .reply(status: 403, code: "signed_out", message: "nobody is signed in: sign in with the auth service first"))

            try await h.signIn("alice")
            // A malformed calendar: 400 with its line, nothing imported.
            let malformed = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:x@it.test\r\nDTSTART:2025-13-01\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
            let refused = await failure { let _: EventsWire.Import = try await caller.request("events", "import", ["ics": malformed]) }
            guard case .reply(let status, let code, let message)? = refused else {
                Issue.record("the malformed calendar was not refused: \(String(describing: refused))")
                return
            }
            #expect(status == 400 && code == "invalid_calendar")
            #expect(message.contains("line 5: "), "\(message)")
            #expect(try await call("list", [:], as: EventsWire.List.self).count == 0)

            let imported: EventsWire.Import = try await call("import", ["ics": EventsWire.calendar(prefix: "gig", count: 2, capacity: 1)])
            #expect(imported.imported == ["gig-1@it.test", "gig-2@it.test"])
            let gig = "gig-1@it.test"
            let key = try await h.eventKey(gig)
            #expect(try await call("like", ["id": gig], as: EventsWire.Like.self).like_count == 1)
            #expect(try await call("rsvp", ["id": gig, "going": true], as: EventsWire.RSVP.self).status == "going")

            try await h.signIn("bob")
            let bob: EventsWire.RSVP = try await call("rsvp", ["id": gig, "going": true])
            #expect(bob.status == "waitlisted" && bob.waitlist_position == 1)
            _ = try await call("like", ["id": "gig-2@it.test"], as: EventsWire.Like.self)
            try await h.signIn("carol")
            #expect(try await call("rsvp", ["id": gig, "going": true], as: EventsWire.RSVP.self).waitlist_position == 2)
            let carolMine: EventsWire.Mine = try await call("mine", [:])
            #expect(carolMine.waitlisted.map(\.id) == [gig] && carolMine.going.isEmpty && carolMine.liked.isEmpty)

            // Saved, then SIGKILL and start again: the same events, likes, lists and order.
            let expected = EventsWire.Item(
                event: EventsWire.Event(
                    id: gig, title: "gig 1", status: "scheduled", capacity: 1, like_count: 1, going_count: 1, waitlist_count: 2),
                liked_by: ["alice"], going: ["alice"], waitlist: ["bob", "carol"])
            #expect(await eventually { await h.persistedValue("events.item.\(key)", as: EventsWire.Item.self) == expected })
            try await h.kill(events, service: "events")
            events = try await h.startEvents(stateDirectory: eventsState)
            #expect(await eventually { (try? await call("mine", [:], as: EventsWire.Mine.self))?.user == "carol" })
            #expect(try await call("get", ["id": gig], as: EventsWire.Event.self) == expected.event)
            #expect(try await call("list", [:], as: EventsWire.List.self).events.map(\.id) == [gig, "gig-2@it.test"])
            #expect(
                await h.retainedValue("events.user.bob", as: EventsWire.User.self)
                    == EventsWire.User(user: "bob", liked: ["gig-2@it.test"], going: [], waitlisted: [gig]))
            #expect(
                await h.retainedValue("events.me", as: EventsWire.User.self)
                    == EventsWire.User(user: "carol", liked: [], going: [], waitlisted: [gig]))

            // Alice leaves: bob, first in line before the kill, gets the place.
            try await h.signIn("alice")
            let aliceMine: EventsWire.Mine = try await call("mine", [:])
            #expect(aliceMine.going.map(\.id) == [gig] && aliceMine.liked.map(\.id) == [gig] && aliceMine.waitlisted.isEmpty)
            #expect(try await call("rsvp", ["id": gig, "going": false], as: EventsWire.RSVP.self).status == "not_going")
            #expect(
                await eventually {
                    let item = await h.retainedValue("events.item.\(key)", as: EventsWire.Item.self)
                    return item?.going == ["bob"] && item?.waitlist == ["carol"]
                })

            // Export: both events as iCalendar, without the counts.
            struct Export: Codable { var count: Int; var ics: String }
            let export: Export = try await call("export", [:])
            #expect(export.count == 2 && export.ics.contains("UID:\(gig)\r\n") && export.ics.contains("X-SWIFTBUS-CAPACITY:1\r\n"))

            // Each user's lists stay apart: bob goes, alice only likes, carol still waits.
            #expect(
                await eventually {
                    await h.retainedValue("events.user.alice", as: EventsWire.User.self)
                        == EventsWire.User(user: "alice", liked: [gig], going: [], waitlisted: [])
                })
            #expect(
                await h.retainedValue("events.user.bob", as: EventsWire.User.self)
                    == EventsWire.User(user: "bob", liked: ["gig-2@it.test"], going: [gig], waitlisted: []))
            #expect(
                await h.retainedValue("events.user.carol", as: EventsWire.User.self)
                    == EventsWire.User(user: "carol", liked: [], going: [], waitlisted: [gig]))

            // Signed out: like answers 403, and events.me shows nobody.
            let _: LogoutReply = try await caller.request("auth", "logout", NoInput(), timeout: .seconds(10))
            #expect(
                await eventually {
                    let error = await failure {
                        let _: EventsWire.Like = try await caller.request("events", "like", ["id": gig], timeout: .seconds(2))
                    }
                    return error?.status == 403
                })
            #expect(await eventually { await h.retainedValue("events.me", as: EventsWire.User.self)?.user == nil })
            _ = events
        }
    }
}
