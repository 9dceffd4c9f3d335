import Bus
import FeedCore
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

/// Votes and saves: optimistic as in the seed, rolled back with an event when Reddit refuses.
@MainActor
struct FeedWriteTests {
    func setPost(_ state: inout FeedState, _ fullname: String, _ change: (inout Post) -> Void) {
        for key in state.listingKeys {
            for index in state.listings[key]!.posts.indices where state.listings[key]!.posts[index].name == fullname {
                change(&state.listings[key]!.posts[index])
            }
        }
    }

    @Test func vote_whenRedditTakesIt_showsAtOnceAndConfirms() async throws {
        try await RedditTestServer.with { server in
            let store = FeedTest.store(server.base, state: try FeedTest.signedInState())
            let input = FeedInput.Vote(id: "t3_1abc1", dir: 1)
            let id = await store.send(request: { .voteRequested($0, input) }) {
                self.setPost(&$0, "t3_1abc1") { $0.likes = true }
                $0.pendingVotes["t3_1abc1"] = PendingWrite(previous: nil)
            }
            store.expectPublish("feed.post.voted", FeedEvent.Voted(id: "t3_1abc1", dir: 1, likes: true, status: .pending))
            await store.receive(.voteFinished(id, input, nil)) { $0.pendingVotes = [:] }
            store.expectPublish("feed.post.voted", FeedEvent.Voted(id: "t3_1abc1", dir: 1, likes: true, status: .confirmed))
            store.expectReply(id, FeedEvent.Voted(id: "t3_1abc1", dir: 1, likes: true, status: .confirmed))
            let seen = try server.requests()
            #expect(seen.map(\.path) == ["/api/vote"])
            #expect(seen.first?.form == ["id": "t3_1abc1", "dir": "1"])
            #expect(seen.first?.authorization == "bearer token-1")
            await store.finish()
        }
    }

    @Test func vote_whenRedditRefuses_isRolledBackWithAnEvent_andTheCallerGetsTheError() async throws {
        try await RedditTestServer.with(["--refuse", "t3_1abc2"]) { server in
            let store = FeedTest.store(server.base, state: try FeedTest.signedInState())
            let input = FeedInput.Vote(id: "t3_1abc2", dir: -1)
            let id = await store.send(request: { .voteRequested($0, input) }) {
                self.setPost(&$0, "t3_1abc2") { $0.likes = false }
                $0.pendingVotes["t3_1abc2"] = PendingWrite(previous: true)
            }
            store.expectPublish("feed.post.voted", FeedEvent.Voted(id: "t3_1abc2", dir: -1, likes: false, status: .pending))
            let failure = FeedFailure.reddit(.forbidden(reason: "refused"))
            await store.receive(.voteFinished(id, input, failure)) {
                self.setPost(&$0, "t3_1abc2") { $0.likes = true }
                $0.pendingVotes = [:]
            }
            store.expectPublish(
                "feed.post.voted", FeedEvent.Voted(id: "t3_1abc2", dir: -1, likes: true, status: .rolledBack, error: failure.description))
            store.expectFailure(id, status: 403, code: "forbidden")
            #expect(store.state == (try FeedTest.signedInState()), "the listing shows the vote it had")
            await store.finish()
        }
    }

    @Test func vote_whileOneIsInFlight_isRefused() async throws {
        var state = try FeedTest.signedInState()
        state.pendingVotes["t3_1abc1"] = PendingWrite(previous: nil)
        let store = FeedTest.store(try await FeedTest.deadURL(), state: state)
        let id = await store.send(request: { .voteRequested($0, FeedInput.Vote(id: "t3_1abc1", dir: 1)) })
        store.expectFailure(id, status: 409, code: "write_in_flight")
        await store.finish()
    }

    @Test func save_whenRedditIsUnreachable_isRolledBack() async throws {
        let base = try await FeedTest.deadURL()
        let store = FeedTest.store(base, state: try FeedTest.signedInState())
        let id = await store.send(request: { .saveRequested($0, id: "t3_1abc1", saved: true) }) {
            self.setPost(&$0, "t3_1abc1") { $0.saved = true }
            $0.pendingSaves["t3_1abc1"] = PendingWrite(previous: false)
        }
        store.expectPublish("feed.post.saved", FeedEvent.Saved(id: "t3_1abc1", saved: true, status: .pending))
        let failure = FeedFailure.reddit(.upstreamUnreachable("POST \(base.absoluteString)/api/save: connection refused"))
        await store.receive(.saveFinished(id, id: "t3_1abc1", saved: true, failure)) {
            self.setPost(&$0, "t3_1abc1") { $0.saved = false }
            $0.pendingSaves = [:]
        }
        store.expectPublish("feed.post.saved", FeedEvent.Saved(id: "t3_1abc1", saved: false, status: .rolledBack, error: failure.description))
        store.expectFailure(id, status: 503, code: "upstream_unreachable")
        await store.finish()
    }

    @Test func writes_whenSignedOut_answer403SayingToSignIn() async throws {
        var state = try FeedTest.signedInState()
        state.auth = AuthView(state: .signedOut)
        state.account = .empty
        let store = FeedTest.store(try await FeedTest.deadURL(), state: state)
        let vote = await store.send(request: { .voteRequested($0, FeedInput.Vote(id: "t3_1abc1", dir: 1)) })
        let save = await store.send(request: { .saveRequested($0, id: "t3_1abc1", saved: true) })
        let subscribe = await store.send(request: { .subscribeRequested($0, FeedInput.Subscribe(subreddit: "swift", action: "sub")) })
        for id in [vote, save, subscribe] {
            guard case .failure(let error)? = store.reply(id) else {
                Issue.record("request \(id) was not refused")
                continue
            }
            #expect(error.status == 403 && error.code == "sign_in_required")
            #expect(error.message.contains("sign in with auth"))
        }
        await store.finish()
    }
}
