import Bus
import FeedCore
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

/// What the feature tests share: the feature pointed at a local Reddit server, `auth`'s answers
/// as values, and the fixtures' data as the feed keeps it.
enum FeedTest {
    /// The manual clock's start, as the feed stamps it.
    static let fetchedAt = "2023-11-14T22:13:20Z"
    static let alice = AuthView(state: .authenticated, user: "alice")

    /// Tokens as `auth` hands them out: `token-1`, and after each refresh the next number.
    final class Tokens: Sendable {
        let issued: Locked<Int>
        let refreshes = Locked(0)
        /// Whether a refresh brings a new token (false: auth's refresh failed).
        let refreshWorks: Bool

        /// Runs before each refresh completes (a refresh that takes its time).
        let beforeRefresh: @Sendable () async -> Void

        init(first: Int = 1, refreshWorks: Bool = true, beforeRefresh: @escaping @Sendable () async -> Void = {}) {
            issued = Locked(first)
            self.refreshWorks = refreshWorks
            self.beforeRefresh = beforeRefresh
        }

        var value: AuthTokens {
            AuthTokens(
                token: { () async throws(AuthTokenFailure) -> String in "token-\(self.issued.withLock { $0 })" },
                refresh: { () async throws(AuthTokenFailure) in
                    self.refreshes.withLock { $0 += 1 }
                    await self.beforeRefresh()
                    if self.refreshWorks { self.issued.withLock { $0 += 1 } }
                })
        }
    }

    static func api(_ base: URL, tokens: AuthTokens, clock: ManualClock) -> RedditAPI {
        RedditAPI(
            http: .live(timeout: .seconds(5)), tokens: tokens, settings: RedditSettings(oauthBaseURL: base, publicBaseURL: base),
            clock: .manual(clock))
    }

    @MainActor
    static func store(_ base: URL, tokens: AuthTokens = Tokens().value, state: FeedState = FeedState()) -> TestStore<FeedFeature> {
        let clock = ManualClock()
        return TestStore(
            FeedFeature(api: api(base, tokens: tokens, clock: clock), clock: .manual(clock)), initialState: state,
            stateTopics: FeedService.stateTopics, clock: clock)
    }

    /// `feed.user` after loading the fixtures: me, both subscription pages sorted, the multis.
    static func account() throws -> FeedAccount {
        var collector = SubscriptionCollector()
        try collector.add(try Fixture.ok("subscriptions_page1.json").subscriptionsPage(for: .mySubscriptions()))
        try collector.add(try Fixture.ok("subscriptions_page2.json").subscriptionsPage(for: .mySubscriptions(after: "t5_2s61a")))
        return FeedAccount(
            user: try Fixture.ok("me.json").account(for: .me), subscriptions: collector.subscriptions,
            multis: try Fixture.ok("multis_mine.json").multis(for: .myMultis), fetchedAt: fetchedAt)
    }

    /// r/swift's hot listing as the feed caches it, fetched for `viewer`.
    static func swiftHot(fetchedAt: String = fetchedAt, viewer: String? = nil) throws -> CachedListing {
        let query = ListingQuery(subreddit: "swift")
        let listing = try Fixture.ok("subreddit_hot.json").listing(of: Post.self, for: try query.endpoint())
        return CachedListing(
            key: query.key, query: query, posts: listing.children, after: listing.after, before: listing.before, fetchedAt: fetchedAt,
            viewer: viewer)
    }

    /// A state signed in as alice with her account loaded (by this process) and r/swift cached
    /// with her votes and saves.
    static func signedInState() throws -> FeedState {
        var state = FeedState()
        state.auth = alice
        state.account = try account()
        state.accountSession = "alice"
        let listing = try swiftHot(viewer: "alice")
        state.listings[listing.key] = listing
        state.listingKeys = [listing.key]
        return state
    }

    /// A loopback URL nothing listens on: Reddit unreachable.
    static func deadURL() async throws -> URL {
        let port = try #require(FreePorts.kernelBase())
        return URL(string: "http://127.0.0.1:\(port)")!
    }
}
