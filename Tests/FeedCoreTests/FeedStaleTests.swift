import Bus
import FeedCore
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

/// Offline: the restored listings and account are served stale with their fetch time.
@MainActor
struct FeedStaleTests {
    @Test func listing_whenRedditIsUnreachable_servesTheStoredOneStale() async throws {
        let base = try await FeedTest.deadURL()
        var state = try FeedTest.signedInState()
        state.auth = AuthView(state: .signedOut)
        let fetchedAt = "2023-11-01T08:00:00Z"
        let cached = try FeedTest.swiftHot(fetchedAt: fetchedAt)
        state.listings[cached.key] = cached
        let store = FeedTest.store(base, state: state)
        let query = ListingQuery(subreddit: "swift")
        let id = await store.send(request: { .listingRequested($0, query) })
        let failure = FeedFailure.reddit(.upstreamUnreachable("GET \(base.absoluteString)/r/swift/hot.json: connection refused"))
        await store.receive(.listingLoaded(id, query, .failure(failure), at: FeedTest.fetchedAt))
        store.expectReply(id, ListingReply(listing: cached, stale: true))
        await store.finish()
    }

    @Test func listing_whenRedditIsUnreachableAndNothingIsStored_answers503UpstreamUnreachable() async throws {
        let base = try await FeedTest.deadURL()
        let store = FeedTest.store(base)
        let query = ListingQuery(subreddit: "linux", sort: "top", t: "week")
        let id = await store.send(request: { .listingRequested($0, query) })
        let failure = FeedFailure.reddit(.upstreamUnreachable("GET \(base.absoluteString)/r/linux/top.json: connection refused"))
        await store.receive(.listingLoaded(id, query, .failure(failure), at: FeedTest.fetchedAt))
        store.expectFailure(id, status: 503, code: "upstream_unreachable")
        await store.finish()
    }

    @Test func me_whenRedditIsUnreachable_servesTheRestoredAccountStale() async throws {
        let base = try await FeedTest.deadURL()
        let state = try FeedTest.signedInState()
        let store = FeedTest.store(base, state: state)
        let id = await store.send(request: { .meRequested($0) })
        let failure = FeedFailure.reddit(.upstreamUnreachable("GET \(base.absoluteString)/api/v1/me: connection refused"))
        await store.receive(.meLoaded(id, .failure(failure), at: FeedTest.fetchedAt))
        store.expectReply(id, AccountReply(account: state.account, stale: true))
        await store.finish()
    }

    @Test func authenticated_whenRedditIsUnreachable_keepsTheRestoredAccount() async throws {
        let base = try await FeedTest.deadURL()
        var state = try FeedTest.signedInState()
        state.auth = nil
        state.accountSession = nil
        let store = FeedTest.store(base, state: state)
        await store.send(.authChanged(FeedTest.alice)) {
            $0.auth = FeedTest.alice
            $0.accountLoading = true
            $0.accountSession = "alice"
        }
        let failure = FeedFailure.reddit(.upstreamUnreachable("GET \(base.absoluteString)/api/v1/me: connection refused"))
        await store.receive(.accountLoadFailed(failure)) {
            $0.accountLoading = false
            $0.accountError = failure.description
            $0.accountSession = nil
        }
        #expect(store.state.account == (try FeedTest.account()))
        await store.finish()
    }

    @Test func accountLoad_whenItFailed_isTriedAgainEveryMinuteUntilRedditAnswers() async throws {
        try await RedditTestServer.with { server in
            var state = try FeedTest.signedInState()
            state.accountSession = nil
            state.accountError = "503 upstream_unreachable: Reddit is unreachable"
            let store = FeedTest.store(server.base, state: state)
            await store.advance(by: FeedFeature.accountRetryInterval)
            await store.receive(.accountRetryDue) {
                $0.accountSession = "alice"
                $0.accountLoading = true
            }
            var reloaded = try FeedTest.account()
            reloaded.fetchedAt = "2023-11-14T22:14:20Z"
            await store.receive(.accountLoaded(reloaded)) {
                $0.account = reloaded
                $0.accountLoading = false
                $0.accountError = nil
            }
            #expect(try server.requests().map(\.path).first == "/api/v1/me")
            await store.finish()
        }
    }

    @Test func listing_tooLargeForATopic_isServedButNotKept_andOnlyTheNewestAreKept() async throws {
        let store = FeedTest.store(try await FeedTest.deadURL())
        var post = try FeedTest.swiftHot().posts[0]
        post.selftext = String(repeating: "x", count: FeedFeature.maxListingBytes)
        let big = ListingQuery(subreddit: "swift")
        let id = await store.send(request: { .listingLoaded($0, big, .success(Listing(children: [post])), at: FeedTest.fetchedAt) })
        store.expectReply(
            id,
            ListingReply(
                listing: CachedListing(key: big.key, query: big, posts: [post], after: nil, before: nil, fetchedAt: FeedTest.fetchedAt), stale: false)
        )

        var kept: [String] = []
        for limit in 1...(FeedFeature.maxListings + 1) {
            let query = ListingQuery(subreddit: "linux", limit: limit)
            let cached = CachedListing(key: query.key, query: query, posts: [], after: nil, before: nil, fetchedAt: FeedTest.fetchedAt)
            kept.insert(query.key, at: 0)
            let dropped = kept.count > FeedFeature.maxListings ? kept.removeLast() : nil
            let loaded = await store.send(request: { .listingLoaded($0, query, .success(Listing(children: [])), at: FeedTest.fetchedAt) }) {
                $0.listings[query.key] = cached
                $0.listingKeys = kept
                if let dropped { $0.listings[dropped] = nil }
            }
            _ = store.reply(loaded)
        }
        let oldest = ListingQuery(subreddit: "linux", limit: 1).key
        #expect(
            store.statePublishes.filter { $0.topic == "feed.listing.\(oldest)" }.map { String(decoding: $0.payload, as: UTF8.self) }.last == "null")
        #expect(!store.statePublishes.contains { $0.topic == "feed.listing.\(big.key)" }, "the large listing was never published")
        await store.finish()
    }

    @Test func listingKey_isATopicTokenThatTellsEveryQueryApart() {
        let queries = [
            ListingQuery(), ListingQuery(subreddit: "swift"), ListingQuery(subreddit: "Swift"), ListingQuery(subreddit: "swift", sort: "new"),
            ListingQuery(subreddit: "swift", sort: "top", t: "week"), ListingQuery(subreddit: "swift", after: "t3_1abc3"),
            ListingQuery(subreddit: "swift", limit: 50), ListingQuery(subreddit: "swift+ios"), ListingQuery(subreddit: "swift_ios"),
        ]
        let keys = queries.map(\.key)
        #expect(keys[1] == keys[2], "subreddit names are case-insensitive")
        #expect(Set(keys).count == keys.count - 1)
        for key in keys {
            #expect(key.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 || $0 == 95 }, "\(key)")
        }
        #expect(keys[1].hasPrefix("swift-hot-"))
    }
}
