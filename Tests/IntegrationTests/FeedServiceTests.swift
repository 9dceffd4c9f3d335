import Bus
import BusTestSupport
import Foundation
import Testing

/// `FeedService` as a real process with a kernel, `persist`, `auth` on the authlib OAuth server
/// and the local Reddit server: the seed's CurrentUserStore flow across processes.
@Suite(.serialized)
struct FeedServiceTests {
    struct Vote: Encodable {
        var id: String
        var dir: Int
    }

    struct VoteValue: Decodable {
        var id: String
        var likes: Bool?
        var status: String
    }

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("feed-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }

    @Test func signIn_fillsFeedUserWithEveryPage_killedFeedServesItsRestoredStateStale_signOutClears() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let issued = folder.appendingPathComponent("issued.txt")
        try await Harness.with { h in
            _ = try await h.startPersist(stateDirectory: folder.appendingPathComponent("persist").path)
            let oauth = try await OAuthServer.start(h, arguments: ["--issued", issued.path])
            let reddit = try await RedditServer.start(h, log: folder.appendingPathComponent("reddit.log"))
            _ = try await h.startAuthForFeed(stateDirectory: folder.appendingPathComponent("auth"), oauth: oauth)
            let feedState = folder.appendingPathComponent("feed")
            var feed = try await h.startFeed(stateDirectory: feedState, reddit: reddit.base)
            let client = h.client(name: "tester")

            // Signed out: an empty feed.user, and writes say to sign in.
            #expect(await eventually { await h.feedUser().map { $0.user == nil && $0.subscriptions.isEmpty } == true })
            do throws(BusError) {
                let _: [String: String] = try await client.request("feed", "vote", Vote(id: "t3_1abc1", dir: 1))
                Issue.record("a vote went through signed out")
            } catch {
                guard case .reply(let status, let code, let message) = error else { throw error }
                #expect(status == 403 && code == "sign_in_required" && message.contains("sign in with auth"))
            }

            // Sign in through auth: feed.user gets me, both subscription pages sorted, the multis.
            let started: AuthorizeReply = try await client.request("auth", "startSignIn", NoInput())
            let redirect = try await OAuthServer.browse(started.authorize_url)
            let signedIn: AuthStateValue = try await client.request("auth", "completeSignIn", ["redirect_url": redirect], timeout: .seconds(15))
            #expect(signedIn.state == "authenticated")
            #expect(await eventually { await h.feedUser()?.user?.name == "alice" })
            let user = try #require(await h.feedUser())
            #expect(user.subscriptions.map(\.display_name) == ["apple", "iOSProgramming", "linux", "swift"])
            #expect(user.multis.map(\.name) == ["swiftthings"])

            // Reddit saw the token auth issued, the feed's User-Agent and raw_json=1.
            let seen = try reddit.requests()
            #expect(seen.map(\.path).prefix(4) == ["/api/v1/me", "/subreddits/mine/subscriber", "/subreddits/mine/subscriber", "/api/multi/mine"])
            let tokens = Set(seen.compactMap(\.authorization))
            #expect(tokens.count == 1)
            let token = try #require(tokens.first.map { String($0.dropFirst("bearer ".count)) })
            let credentials = try String(contentsOf: issued, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(credentials.contains(token), "the bearer token is one auth got from the provider")
            #expect(seen.allSatisfy { $0.user_agent == "linux:swiftbus-feed:0.1.0 (by /u/swiftbus)" && $0.query["raw_json"] == "1" })
            let retainedUser = try #require(try await client.retained("feed.user"))
            #expect(!String(decoding: retainedUser.payload, as: UTF8.self).contains(token), "feed.user never holds the token")

            // A listing, cached under its key.
            let listing: ListingValue = try await client.request("feed", "listing", ["subreddit": "swift"], timeout: .seconds(10))
            #expect(listing.stale == false)
            #expect(listing.posts.map(\.name) == ["t3_1abc1", "t3_1abc2", "t3_1abc3"])
            #expect(await eventually { (try? await client.retained("feed.listing.\(listing.key)")) != nil })
            #expect(await eventually { await h.persistSaved("feed.listing.\(listing.key)") })
            #expect(await eventually { await h.persistSaved("feed.user") })

            // An optimistic vote: pending, then confirmed, on feed.post.voted; the cached listing shows it.
            let votes = try h.client(name: "watch").subscribe(["feed.post.voted"])
            let collector = Collector(votes)
            defer { collector.stop() }
            try await votes.confirm()
            let voted: VoteValue = try await client.request("feed", "vote", Vote(id: "t3_1abc1", dir: 1), timeout: .seconds(10))
            #expect(voted.status == "confirmed" && voted.likes == true)
            #expect(await collector.waitFor(count: 2))
            let statuses = collector.live.compactMap { try? JSONDecoder().decode(VoteValue.self, from: Data($0.payload)).status }
            #expect(statuses == ["pending", "confirmed"])
            #expect(
                await eventually {
                    guard let event = try? await client.retained("feed.listing.\(listing.key)"),
                        let cached = try? JSONDecoder().decode(ListingValue.Cached.self, from: Data(event.payload))
                    else { return false }
                    return cached.posts.first?.likes == true
                })
            #expect(try reddit.requests().last.map { "\($0.method) \($0.path)" } == "POST /api/vote")

            // SIGKILL feed, Reddit down, feed again: the account and the listing come back and
            // are served stale with their fetch time.
            try await h.kill(feed, service: "feed")
            reddit.process.signal(SIGKILL)
            _ = await reddit.process.waitForExit(timeout: .seconds(5))
            feed = try await h.startFeed(stateDirectory: feedState, reddit: reddit.base)
            let me: FeedUserValue = try await client.request("feed", "me", NoInput(), timeout: .seconds(10))
            #expect(me.stale == true)
            #expect(me.user?.name == "alice")
            #expect(me.subscriptions.map(\.display_name) == ["apple", "iOSProgramming", "linux", "swift"])
            #expect(me.fetched_at == user.fetched_at)
            let stale: ListingValue = try await client.request("feed", "listing", ["subreddit": "swift"], timeout: .seconds(10))
            #expect(stale.stale == true)
            #expect(stale.fetched_at == listing.fetched_at)
            #expect(stale.posts.map(\.name) == listing.posts.map(\.name))
            #expect(stale.posts.first?.likes == true, "the vote was saved with the listing")
            do throws(BusError) {
                let _: ListingValue = try await client.request("feed", "listing", ["subreddit": "linux"], timeout: .seconds(10))
                Issue.record("a listing never fetched was served with Reddit down")
            } catch {
                #expect(error.status == 503)
                if case .reply(_, let code, _) = error { #expect(code == "upstream_unreachable") }
            }

            // Sign out through auth: feed.user is cleared.
            let out: LogoutReply = try await client.request("auth", "logout", NoInput(), timeout: .seconds(15))
            #expect(out.state == "signedOut")
            #expect(await eventually { await h.feedUser().map { $0.user == nil && $0.subscriptions.isEmpty && $0.multis.isEmpty } == true })
            // ... and the cached listing keeps none of the user's votes and saves.
            #expect(
                await eventually {
                    guard let value = try? await client.retained("feed.listing.\(listing.key)"),
                        let cached = try? JSONDecoder().decode(ListingValue.Cached.self, from: Data(value.payload))
                    else { return false }
                    return cached.posts.count == 3 && cached.posts.allSatisfy { $0.likes == nil && $0.saved == false }
                })
            #expect(feed.isRunning)
        }
    }

    @Test func authToken_isRefusedToEveryCallerButFeed() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.with { h in
            let oauth = try await OAuthServer.start(h)
            _ = try await h.startAuthForFeed(stateDirectory: folder.appendingPathComponent("auth"), oauth: oauth)
            for caller in ["tester", "weather", "busctl"] {
                do throws(BusError) {
                    let _: TokenReply = try await h.client(name: caller).request("auth", "token", NoInput())
                    Issue.record("\(caller) got the token")
                } catch {
                    #expect(
                        error
                            == .reply(
                                status: 403, code: "forbidden",
                                message: "'\(caller)' may not read the access token (auth --token-callers lists who may)"))
                }
            }
            // feed is allowed: nobody is signed in, so auth says so instead of refusing.
            do throws(BusError) {
                let _: TokenReply = try await h.client(name: "feed").request("auth", "token", NoInput())
                Issue.record("a token while signed out")
            } catch {
                #expect(error.status == 409, "\(error)")
            }
        }
    }
}
