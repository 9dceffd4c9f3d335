import Bus
import BusTestSupport
import FeedCore
import Foundation
import ServiceKit
import Testing

/// The Reddit client against a local server speaking Reddit's JSON: what it sends, the one
/// refresh on 401, and the rate-limit budget.
struct RedditAPITests {
    func api(_ server: RedditTestServer, _ tokens: FeedTest.Tokens, clock: ManualClock = ManualClock()) -> RedditAPI {
        FeedTest.api(server.base, tokens: tokens.value, clock: clock)
    }

    @Test func requests_carryTheBearerTokenTheUserAgentAndRawJSON_orGoAnonymousToTheJSONPaths() async throws {
        try await RedditTestServer.with { server in
            let api = api(server, FeedTest.Tokens())
            let me = try await api.me()
            #expect(me.name == "alice")
            let posts = try await api.posts(.subreddit(name: "swift", sort: .top(.week), page: PageRequest(limit: 10)), signedIn: false)
            #expect(posts.children.map(\.name) == ["t3_1abc1", "t3_1abc2", "t3_1abc3"])
            let page = try await api.comments(.comments(subreddit: "swift", postID: "1abc1"), signedIn: true)
            #expect(page.post.name == "t3_1abc1")
            #expect(!page.tree.moreStubs.isEmpty, "more stubs stay in place")
            try await api.write(.vote(fullname: "t3_1abc1", direction: .down))

            let seen = try server.requests()
            #expect(seen.map(\.path) == ["/api/v1/me", "/r/swift/top.json", "/r/swift/comments/1abc1", "/api/vote"])
            #expect(seen.map(\.authorization) == ["bearer token-1", nil, "bearer token-1", "bearer token-1"])
            #expect(seen.allSatisfy { $0.user_agent == "linux:swiftbus-feed:0.1.0 (by /u/swiftbus)" && $0.query["raw_json"] == "1" })
            #expect(seen[1].query == ["t": "week", "limit": "10", "raw_json": "1"])
            #expect(seen[3].method == "POST" && seen[3].form == ["id": "t3_1abc1", "dir": "-1"])
        }
    }

    @Test func unauthorized_asksAuthToRefreshOnce_andRetriesWithTheNewToken_elseAnswers403RedditUnauthorized() async throws {
        try await RedditTestServer.with(["--reject-token", "token-1", "--reject-token", "token-5", "--reject-token", "token-6"]) { server in
            let renewed = FeedTest.Tokens(first: 1)
            #expect(try await api(server, renewed).me().name == "alice")
            #expect(renewed.refreshes.withLock { $0 } == 1)
            #expect(try server.requests().map(\.authorization) == ["bearer token-1", "bearer token-2"])

            let rejectedTwice = FeedTest.Tokens(first: 5)
            await #expect(throws: FeedFailure.reddit(.unauthorized(invalidToken: true))) { try await api(server, rejectedTwice).me() }
            #expect(rejectedTwice.refreshes.withLock { $0 } == 1)
            #expect(FeedFailure.reddit(.unauthorized(invalidToken: true)).serviceError.code == "reddit_unauthorized")
            #expect(FeedFailure.reddit(.unauthorized(invalidToken: true)).serviceError.status == 403)

            let sameToken = FeedTest.Tokens(first: 1, refreshWorks: false)
            await #expect(throws: FeedFailure.reddit(.unauthorized(invalidToken: true))) { try await api(server, sameToken).me() }
            #expect(sameToken.refreshes.withLock { $0 } == 1)
            let authorizations = try server.requests().map(\.authorization)
            #expect(authorizations == ["bearer token-1", "bearer token-2", "bearer token-5", "bearer token-6", "bearer token-1"])
        }
    }

    @Test func unknownSubreddit_whenRedditAnswers302_isNotFollowed_andIsTheTypedNotFound() async throws {
        try await RedditTestServer.with(["--unknown-subreddit", "nosuchsub"]) { server in
            let api = api(server, FeedTest.Tokens())
            let endpoint = RedditEndpoint.subreddit(name: "nosuchsub", sort: .new, page: PageRequest(limit: 5))
            await #expect(throws: FeedFailure.reddit(.unknownSubreddit("nosuchsub"))) { try await api.posts(endpoint, signedIn: true) }
            await #expect(throws: FeedFailure.reddit(.unknownSubreddit("nosuchsub"))) { try await api.posts(endpoint, signedIn: false) }
            let failure = FeedFailure.reddit(.unknownSubreddit("nosuchsub")).serviceError
            #expect(failure.status == 404 && failure.code == "unknown_subreddit")

            // One request each: the redirect to the search page was not followed.
            let seen = try server.requests()
            #expect(seen.map(\.path) == ["/r/nosuchsub/new", "/r/nosuchsub/new.json"])
            #expect(seen.map(\.authorization) == ["bearer token-1", nil])
            #expect(seen.allSatisfy { $0.user_agent == "linux:swiftbus-feed:0.1.0 (by /u/swiftbus)" })
            #expect(seen.allSatisfy { $0.query == ["limit": "5", "raw_json": "1"] })
        }
    }

    @Test func unauthorized_onManyConcurrentCalls_refreshesOnce_andEveryCallRetriesWithTheNewToken() async throws {
        try await RedditTestServer.with(["--reject-token", "token-1"]) { server in
            let calls = 6
            // The refresh ends only once Reddit has refused every call: all of them hit their 401
            // while it is in flight (or just after).
            let tokens = FeedTest.Tokens(beforeRefresh: {
                _ = await eventually(timeout: .seconds(20)) { ((try? server.requests().count) ?? 0) >= calls }
            })
            let api = api(server, tokens)
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<calls { group.addTask { try await api.me().name } }
                for try await name in group { #expect(name == "alice") }
            }
            #expect(tokens.refreshes.withLock { $0 } == 1)
            let authorizations = try server.requests().map(\.authorization)
            #expect(authorizations.filter { $0 == "bearer token-1" }.count == calls)
            #expect(authorizations.filter { $0 == "bearer token-2" }.count == calls)
        }
    }

    @Test func budget_whenRedditSaysItIsSpent_refusesTheNextRequestWithoutSendingIt() async throws {
        try await RedditTestServer.with(["--ratelimit-remaining", "0"]) { server in
            let api = api(server, FeedTest.Tokens())
            _ = try await api.me()
            await #expect(throws: FeedFailure.reddit(.rateLimited(retryAfter: 300))) { try await api.me() }
            #expect(try server.requests().count == 1)
            let failure = FeedFailure.reddit(.rateLimited(retryAfter: 300)).serviceError
            #expect(failure.status == 503 && failure.code == "rate_limited")
            // The anonymous budget is its own.
            _ = try await api.posts(.frontPage(sort: .hot), signedIn: false)
            #expect(try server.requests().count == 2)
        }
    }

    @Test func token_whenAuthRefusesOrIsDown_isAClearError() async throws {
        let base = try await FeedTest.deadURL()
        let refused = AuthTokens(
            token: { () async throws(AuthTokenFailure) -> String in throw .refused("auth.token answered 403 forbidden") }, refresh: {})
        let api = RedditAPI(http: .live(), tokens: refused, settings: RedditSettings(oauthBaseURL: base, publicBaseURL: base))
        do {
            _ = try await api.me()
            Issue.record("a call without a token")
        } catch {
            #expect(error == .auth(.refused("auth.token answered 403 forbidden")))
            #expect(error.serviceError.status == 503 && error.serviceError.code == "token_refused")
            #expect(error.serviceError.message.contains("--token-callers feed"))
        }
        let signedOut = AuthTokens(token: { () async throws(AuthTokenFailure) -> String in throw .signedOut("not signed in") }, refresh: {})
        let reads = RedditAPI(http: .live(), tokens: signedOut, settings: RedditSettings(oauthBaseURL: base, publicBaseURL: base))
        await #expect(throws: FeedFailure.auth(.signedOut("not signed in"))) { try await reads.me() }
        // A read goes out anonymously when auth says nobody is signed in.
        await #expect(throws: FeedFailure.reddit(.upstreamUnreachable("GET \(base.absoluteString)/r/swift/hot.json: connection refused"))) {
            try await reads.posts(.subreddit(name: "swift", sort: .hot), signedIn: true)
        }
    }

    @Test func userAgent_parsesTheFormRedditAsksFor() throws {
        let agent = try RedditUserAgent(parsing: "linux:my-app:1.2 (by /u/bob_1)")
        #expect(agent.description == "linux:my-app:1.2 (by /u/bob_1)")
        #expect(throws: RedditError.self) { try RedditUserAgent(parsing: "curl/8.0") }
        #expect(throws: RedditError.self) { try RedditUserAgent(parsing: "linux:a:b:c (by /u/x)") }
    }
}
