import Bus
import FeedCore
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

/// Nothing one Reddit user's token brought stays for the next one (or for nobody): their votes
/// and saves in the cached listings, their front page, their account.
@MainActor
struct FeedPrivacyTests {
    static let swift = ListingQuery(subreddit: "swift")
    static let front = ListingQuery()

    /// `listings` with every post unvoted and unsaved, fetched for nobody: written out here
    /// rather than with the code under test.
    static func withoutUserFields(_ listings: [String: CachedListing]) throws -> [String: CachedListing] {
        listings.mapValues { listing in
            var listing = listing
            listing.viewer = nil
            for index in listing.posts.indices {
                listing.posts[index].likes = nil
                listing.posts[index].saved = false
            }
            return listing
        }
    }

    /// Signed in as alice, with r/swift and her front page cached with her votes and saves.
    static func aliceState() throws -> FeedState {
        var state = try FeedTest.signedInState()
        let posts = try #require(state.listings[swift.key]).posts
        state.listings[front.key] = CachedListing(
            key: front.key, query: front, posts: posts, after: nil, before: nil, fetchedAt: FeedTest.fetchedAt, viewer: "alice")
        state.listingKeys.append(front.key)
        return state
    }

    func published<T: Decodable>(_ store: TestStore<FeedFeature>, _ topic: String, as type: T.Type) throws -> T? {
        guard let payload = store.statePublishes.last(where: { $0.topic == topic })?.payload else { return nil }
        return try JSONDecoder().decode(T.self, from: Data(payload))
    }

    @Test func signedOut_clearsVotesAndSavesFromEveryCachedListing_dropsTheFrontPage_andPublishesBoth() async throws {
        let state = try Self.aliceState()
        let posts = try #require(state.listings[Self.swift.key]).posts
        #expect(posts.contains { $0.likes == true } && posts.contains { $0.likes == false } && posts.contains(where: \.saved))
        let store = FeedTest.store(try await FeedTest.deadURL(), state: state)
        await store.send(.authChanged(AuthView(state: .signedOut))) {
            $0.auth = AuthView(state: .signedOut)
            $0.account = .empty
            $0.accountSession = nil
            $0.listings = try Self.withoutUserFields([Self.swift.key: try #require(state.listings[Self.swift.key])])
            $0.listingKeys = [Self.swift.key]
        }
        let shown = try #require(try published(store, "feed.listing.\(Self.swift.key)", as: CachedListing.self))
        #expect(shown.posts.map(\.name) == posts.map(\.name))
        #expect(shown.posts.allSatisfy { $0.likes == nil && !$0.saved } && shown.viewer == nil)
        let frontTopic = store.statePublishes.last { $0.topic == "feed.listing.\(Self.front.key)" }
        #expect(frontTopic.map { String(decoding: $0.payload, as: UTF8.self) } == "null", "her front page is removed from the bus")
        #expect(try published(store, "feed.state", as: FeedSummary.self)?.listings == [Self.swift.key])
        await store.finish()
    }

    @Test func anotherUserSigningIn_seesNeitherTheFirstUsersAccountNorHerVotes_whileTheirsLoads() async throws {
        let base = try await FeedTest.deadURL()
        let state = try Self.aliceState()
        let store = FeedTest.store(base, state: state)
        let bob = AuthView(state: .authenticated, user: "bob")
        await store.send(.authChanged(bob)) {
            $0.auth = bob
            $0.account = .empty
            $0.accountSession = "bob"
            $0.accountLoading = true
            $0.listings = try Self.withoutUserFields([Self.swift.key: try #require(state.listings[Self.swift.key])])
            $0.listingKeys = [Self.swift.key]
        }
        #expect(try published(store, "feed.user", as: FeedAccount.self) == .empty)
        let failure = FeedFailure.reddit(.upstreamUnreachable("GET \(base.absoluteString)/api/v1/me: connection refused"))
        await store.receive(.accountLoadFailed(failure)) {
            $0.accountLoading = false
            $0.accountError = failure.description
            $0.accountSession = nil
        }
        await store.finish()
    }

    @Test func signedOut_forgetsPendingWrites_soALateRollbackDoesNotPutTheVoteBack() async throws {
        var state = try FeedTest.signedInState()
        state.pendingVotes["t3_1abc2"] = PendingWrite(previous: true)
        state.pendingSaves["t3_1abc1"] = PendingWrite(previous: true)
        let store = FeedTest.store(try await FeedTest.deadURL(), state: state)
        await store.send(.authChanged(AuthView(state: .signedOut))) {
            $0.auth = AuthView(state: .signedOut)
            $0.account = .empty
            $0.accountSession = nil
            $0.listings = try Self.withoutUserFields($0.listings)
            $0.pendingVotes = [:]
            $0.pendingSaves = [:]
        }
        // Reddit refuses alice's vote and save after she left: nothing in the listings changes.
        let failure = FeedFailure.reddit(.forbidden(reason: "refused"))
        let vote = FeedInput.Vote(id: "t3_1abc2", dir: -1)
        let voteID = await store.send(request: { .voteFinished($0, vote, failure) })
        store.expectPublish(
            "feed.post.voted", FeedEvent.Voted(id: "t3_1abc2", dir: -1, likes: nil, status: .rolledBack, error: failure.description))
        store.expectFailure(voteID, status: 403, code: "forbidden")
        let saveID = await store.send(request: { .saveFinished($0, id: "t3_1abc1", saved: false, failure) })
        store.expectPublish("feed.post.saved", FeedEvent.Saved(id: "t3_1abc1", saved: true, status: .rolledBack, error: failure.description))
        store.expectFailure(saveID, status: 403, code: "forbidden")
        #expect(store.state.listings.values.allSatisfy { $0.posts.allSatisfy { $0.likes == nil && !$0.saved } })
        await store.finish()
    }

    @Test func listingAskedForBeforeSignOut_arrivingAfter_isKeptWithoutHerFields_andHerFrontPageIsNotKept() async throws {
        var state = FeedState()
        state.auth = AuthView(state: .signedOut)
        let store = FeedTest.store(try await FeedTest.deadURL(), state: state)
        let listing = try Fixture.ok("subreddit_hot.json").listing(of: Post.self, for: try Self.swift.endpoint())

        let frontID = await store.send(request: { .listingLoaded($0, Self.front, .success(listing), at: FeedTest.fetchedAt, viewer: "alice") })
        let frontReply = try #require(try store.reply(frontID)?.get())
        let frontShown = try JSONDecoder().decode(ListingReply.self, from: Data(frontReply))
        #expect(frontShown.listing.posts.allSatisfy { $0.likes == nil && !$0.saved } && frontShown.listing.viewer == nil)

        let swiftID = await store.send(request: { .listingLoaded($0, Self.swift, .success(listing), at: FeedTest.fetchedAt, viewer: "alice") }) {
            let cached = CachedListing(
                key: Self.swift.key, query: Self.swift, posts: listing.children, after: listing.after, before: listing.before,
                fetchedAt: FeedTest.fetchedAt, viewer: "alice")
            $0.listings = try Self.withoutUserFields([Self.swift.key: cached])
            $0.listingKeys = [Self.swift.key]
        }
        _ = store.reply(swiftID)
        await store.finish()
    }
}
