import Bus
import FeedCore
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

/// The feed's reducer driven by the kit's TestStore against a local Reddit server: the seed's
/// `CurrentUserStore` flow on `auth.state`, and stale serving.
@MainActor
struct FeedFeatureTests {
    func published<T: Decodable>(_ store: TestStore<FeedFeature>, _ topic: String, as type: T.Type) throws -> T? {
        guard let payload = store.statePublishes.last(where: { $0.topic == topic })?.payload else { return nil }
        return try JSONDecoder().decode(T.self, from: Data(payload))
    }

    @Test func authenticated_loadsMeEverySubscriptionPageAndTheMultis_intoFeedUser() async throws {
        try await RedditTestServer.with { server in
            let store = FeedTest.store(server.base)
            await store.send(.authChanged(FeedTest.alice)) {
                $0.auth = FeedTest.alice
                $0.accountLoading = true
                $0.accountSession = "alice"
            }
            let account = try FeedTest.account()
            await store.receive(.accountLoaded(account)) {
                $0.account = account
                $0.accountLoading = false
            }
            #expect(account.subscriptions.map(\.displayName) == ["apple", "iOSProgramming", "linux", "swift"])
            #expect(account.multis.map(\.name) == ["swiftthings"])
            #expect(try published(store, "feed.user", as: FeedAccount.self) == account)
            let seen = try server.requests()
            #expect(seen.map(\.path) == ["/api/v1/me", "/subreddits/mine/subscriber", "/subreddits/mine/subscriber", "/api/multi/mine"])
            #expect(seen.map { $0.query["after"] } == [nil, nil, "t5_2s61a", nil])
            #expect(seen.allSatisfy { $0.authorization == "bearer token-1" })
            await store.finish()
        }
    }

    @Test func authenticated_afterARefreshOfTheSameUser_loadsNothing() async throws {
        var state = try FeedTest.signedInState()
        state.auth = AuthView(state: .refreshing, user: "alice")
        let store = FeedTest.store(try await FeedTest.deadURL(), state: state)
        await store.send(.authChanged(FeedTest.alice)) { $0.auth = FeedTest.alice }
        await store.finish()
    }

    @Test func authenticated_whenTheFirstValueAtStartIsRefreshing_stillLoadsOnceAuthenticated() async throws {
        try await RedditTestServer.with { server in
            var restored = try FeedTest.signedInState()
            restored.auth = nil
            restored.accountSession = nil
            let store = FeedTest.store(server.base, state: restored)
            let refreshing = AuthView(state: .refreshing, user: "alice")
            await store.send(.authChanged(refreshing)) { $0.auth = refreshing }
            await store.send(.authChanged(FeedTest.alice)) {
                $0.auth = FeedTest.alice
                $0.accountLoading = true
                $0.accountSession = "alice"
            }
            await store.receive(.accountLoaded(try FeedTest.account())) { $0.accountLoading = false }
            #expect(try server.requests().count == 4)
            await store.finish()
        }
    }

    @Test func signedOut_clearsTheUser_andFeedUserShowsNobody() async throws {
        let store = FeedTest.store(try await FeedTest.deadURL(), state: try FeedTest.signedInState())
        await store.send(.authChanged(AuthView(state: .signedOut))) {
            $0.auth = AuthView(state: .signedOut)
            $0.account = .empty
            $0.accountSession = nil
            $0.listings = try FeedPrivacyTests.withoutUserFields($0.listings)
        }
        #expect(try published(store, "feed.user", as: FeedAccount.self) == .empty)
        let summary = try #require(try published(store, "feed.state", as: FeedSummary.self))
        #expect(summary.auth == .signedOut && summary.user == nil && summary.listings.count == 1)
        await store.finish()
    }

    @Test func refreshing_holdsCallsThatNeedTheToken_untilAuthenticatedAgain() async throws {
        try await RedditTestServer.with { server in
            let store = FeedTest.store(server.base, state: try FeedTest.signedInState())
            let refreshing = AuthView(state: .refreshing, user: "alice")
            await store.send(.authChanged(refreshing)) { $0.auth = refreshing }
            let query = ListingQuery(subreddit: "swift", sort: "new")
            let id = await store.send(request: { .listingRequested($0, query) }) { $0.held = [.listingRequested(RequestID(1), query)] }
            #expect(store.reply(id) == nil)
            #expect(try server.requests().isEmpty)

            await store.send(.authChanged(FeedTest.alice)) {
                $0.auth = FeedTest.alice
                $0.held = []
            }
            let listing = try Fixture.ok("subreddit_hot.json").listing(of: Post.self, for: try query.endpoint())
            let cached = CachedListing(
                key: query.key, query: query, posts: listing.children, after: listing.after, before: listing.before, fetchedAt: FeedTest.fetchedAt,
                viewer: "alice")
            await store.receive(.listingLoaded(id, query, .success(listing), at: FeedTest.fetchedAt, viewer: "alice")) {
                $0.listings[query.key] = cached
                $0.listingKeys.insert(query.key, at: 0)
            }
            store.expectReply(id, ListingReply(listing: cached, stale: false))
            let seen = try server.requests()
            #expect(seen.map(\.path) == ["/r/swift/new"])
            #expect(seen.first?.authorization == "bearer token-1")
            #expect(try published(store, "feed.listing.\(query.key)", as: CachedListing.self) == cached)
            await store.finish()
        }
    }

    @Test func refreshing_thenSignedOut_runsTheHeldCallsSignedOut() async throws {
        let store = FeedTest.store(try await FeedTest.deadURL(), state: try FeedTest.signedInState())
        let refreshing = AuthView(state: .refreshing, user: "alice")
        await store.send(.authChanged(refreshing)) { $0.auth = refreshing }
        let input = FeedInput.Vote(id: "t3_1abc1", dir: 1)
        let id = await store.send(request: { .voteRequested($0, input) }) { $0.held = [.voteRequested(RequestID(1), input)] }
        await store.send(.authChanged(AuthView(state: .signedOut))) {
            $0.auth = AuthView(state: .signedOut)
            $0.account = .empty
            $0.accountSession = nil
            $0.listings = try FeedPrivacyTests.withoutUserFields($0.listings)
            $0.held = []
        }
        store.expectFailure(id, status: 403, code: "sign_in_required")
        await store.finish()
    }
}
