import Bus
import FeedCore
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

/// Comments, more comments and subscriptions through the feature, against the local Reddit server.
@MainActor
struct FeedPassThroughTests {
    struct NodeValue: Decodable {
        struct Thing: Decodable {
            struct Data: Decodable { var name: String }
            var kind: String
            var data: Data
        }
        var depth: Int
        var thing: Thing
    }

    struct CommentsValue: Decodable {
        struct PostValue: Decodable { var name: String }
        var post: PostValue?
        var comments: [NodeValue]
    }

    func value<T: Decodable>(_ store: TestStore<FeedFeature>, _ id: RequestID, as type: T.Type) throws -> T {
        guard case .success(let bytes)? = store.reply(id) else { throw ServerFailure(description: "request \(id) was not answered with a value") }
        return try JSONDecoder().decode(T.self, from: Data(bytes))
    }

    @Test func comments_andMoreComments_answerTheTreeInReadingOrderWithDepthsAndStubs() async throws {
        try await RedditTestServer.with { server in
            let store = FeedTest.store(server.base)
            let input = FeedInput.Comments(subreddit: "swift", id: "1abc1", sort: "best")
            let id = await store.send(request: { .commentsRequested($0, input) })
            let page = try Fixture.ok("comments_1abc1.json").commentsPage(for: .comments(subreddit: "swift", postID: "1abc1"))
            await store.receive(.answered(id, .success(.comments(page))))
            let comments = try value(store, id, as: CommentsValue.self)
            #expect(comments.post?.name == "t3_1abc1")
            #expect(comments.comments.map(\.depth) == page.tree.nodes.map(\.depth))
            #expect(comments.comments.contains { $0.thing.kind == "more" })

            let more = FeedInput.MoreComments(id: "t3_1abc1", children: ["c3", "c4"])
            let moreID = await store.send(request: { .moreCommentsRequested($0, more) })
            let things = try Fixture.ok("morechildren_c3_c4.json").moreChildren(for: .moreChildren(postID: "1abc1", children: ["c3", "c4"]))
            await store.receive(.answered(moreID, .success(.moreComments(try Self.subtree(things)))))
            let expanded = try value(store, moreID, as: CommentsValue.self)
            #expect(expanded.comments.map(\.thing.data.name) == ["t1_c3", "t1_c11", "t1_c4", "t1_c12"])
            #expect(expanded.comments.map(\.depth) == [0, 1, 0, 1])
            #expect(try server.requests().map(\.path) == ["/r/swift/comments/1abc1.json", "/api/morechildren.json"])
            #expect(try server.requests().first?.query["sort"] == "confidence")
            await store.finish()
        }
    }

    static func subtree(_ things: [CommentTreeItem]) throws -> [CommentNode] {
        // What the answer must be, written out: c3 and c4 at the top, each with its reply.
        let depth: [String: Int] = ["t1_c3": 0, "t1_c11": 1, "t1_c4": 0, "t1_c12": 1]
        return things.map { item in
            switch item {
            case .comment(let comment):
                var bare = comment
                bare.replies = nil
                return CommentNode(depth: depth[comment.name] ?? -1, item: .comment(bare))
            case .more(let stub): return CommentNode(depth: depth[stub.name] ?? -1, item: item)
            }
        }
    }

    @Test func subscribe_andUnsubscribe_updateFeedUserAndAnnounceIt() async throws {
        try await RedditTestServer.with { server in
            var state = try FeedTest.signedInState()
            state.account.subscriptions.removeAll { $0.displayName == "swift" }
            let store = FeedTest.store(server.base, state: state)
            let leave = FeedInput.Subscribe(subreddit: "linux", action: "unsub")
            let leaveID = await store.send(request: { .subscribeRequested($0, leave) })
            await store.receive(.subscribeFinished(leaveID, leave, .success(nil))) {
                $0.account.subscriptions.removeAll { $0.displayName == "linux" }
            }
            store.expectPublish("feed.subreddit.subscribed", FeedEvent.Subscribed(subreddit: "linux", action: "unsub"))
            store.expectReply(leaveID, FeedEvent.Subscribed(subreddit: "linux", action: "unsub"))

            let join = FeedInput.Subscribe(subreddit: "swift", action: "sub")
            let joinID = await store.send(request: { .subscribeRequested($0, join) })
            let about = try Fixture.ok("about_swift.json").subredditAbout(for: .subredditAbout(name: "swift"))
            await store.receive(.subscribeFinished(joinID, join, .success(about))) {
                $0.account.subscriptions = SubscriptionCollector.sortedByName($0.account.subscriptions + [about])
            }
            store.expectPublish("feed.subreddit.subscribed", FeedEvent.Subscribed(subreddit: "swift", action: "sub"))
            store.expectReply(joinID, FeedEvent.Subscribed(subreddit: "swift", action: "sub"))
            #expect(store.state.account.subscriptions.map(\.displayName) == ["apple", "iOSProgramming", "swift"])
            let seen = try server.requests()
            #expect(seen.map(\.path) == ["/api/subscribe", "/api/subscribe", "/r/swift/about"])
            #expect(seen.map(\.form) == [["action": "unsub", "sr_name": "linux"], ["action": "sub", "sr_name": "swift"], [:]])
            await store.finish()
        }
    }

    @Test func search_searchSubreddits_andUser_answerRedditsResults() async throws {
        try await RedditTestServer.with { server in
            let store = FeedTest.store(server.base)
            let search = FeedInput.Search(q: "actors & tasks", subreddit: "swift", sort: "new", t: "month", limit: 5)
            let searchID = await store.send(request: { .searchRequested($0, search) })
            let posts = try Fixture.ok("subreddit_hot.json").listing(of: Post.self, for: nil)
            await store.receive(.answered(searchID, .success(.posts(posts))))
            _ = store.reply(searchID)

            let subreddits = await store.send(request: { .searchSubredditsRequested($0, FeedInput.SearchSubreddits(query: "swi")) })
            let found = try Fixture.ok("search_subreddits.json").subredditSearch(for: nil)
            await store.receive(.answered(subreddits, .success(.subreddits(found))))
            _ = store.reply(subreddits)

            let about = await store.send(request: { .userRequested($0, FeedInput.User(name: "bob")) })
            let account = try Fixture.ok("user_about.json").account(for: .userAbout(username: "bob"))
            await store.receive(.answered(about, .success(.account(account))))
            _ = store.reply(about)

            let overview = await store.send(request: { .userRequested($0, FeedInput.User(name: "bob", where: "overview")) })
            let items = try Fixture.ok("user_overview.json").listing(of: UserContentItem.self, for: nil)
            await store.receive(.answered(overview, .success(.userContent(items))))
            _ = store.reply(overview)

            let saved = await store.send(request: { .userRequested($0, FeedInput.User(name: "bob", where: "saved")) })
            store.expectFailure(saved, status: 403, code: "sign_in_required")

            let seen = try server.requests()
            #expect(seen.map(\.path) == ["/r/swift/search.json", "/api/search_subreddits.json", "/user/bob/about.json", "/user/bob/overview.json"])
            #expect(seen[0].query == ["q": "actors & tasks", "sort": "new", "t": "month", "restrict_sr": "1", "limit": "5", "raw_json": "1"])
            #expect(seen[1].form == ["query": "swi"])
            await store.finish()
        }
    }

    @Test func badInput_isRefusedBeforeAnyRequest() async throws {
        let store = FeedTest.store(try await FeedTest.deadURL(), state: try FeedTest.signedInState())
        let listing = await store.send(request: { .listingRequested($0, ListingQuery(subreddit: "no spaces")) })
        store.expectFailure(listing, status: 400, code: "bad_request")
        let sort = await store.send(request: { .listingRequested($0, ListingQuery(sort: "hot", t: "week")) })
        store.expectFailure(sort, status: 400, code: "bad_request")
        let vote = await store.send(request: { .voteRequested($0, FeedInput.Vote(id: "t3_1abc1", dir: 2)) })
        store.expectFailure(vote, status: 400, code: "bad_request")
        let user = await store.send(request: { .userRequested($0, FeedInput.User(name: "alice", where: "upvoted")) })
        store.expectFailure(user, status: 400, code: "bad_request")
        await store.finish()
    }
}
