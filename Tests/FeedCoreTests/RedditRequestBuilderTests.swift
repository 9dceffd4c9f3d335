import FeedCore
import Foundation
import Testing

struct RedditRequestBuilderTests {
    let oauth = RedditRequestBuilder(access: .oauth(token: "TOKEN-1"))
    let anonymous = RedditRequestBuilder(access: .anonymous)

    private func url(_ builder: RedditRequestBuilder, _ endpoint: RedditEndpoint) throws -> String {
        try builder.request(for: endpoint).url.absoluteString
    }

    private func form(_ request: HTTPRequestSpec) -> String? {
        request.body.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func request_whenOAuth_sendsBearerUserAgentAndRawJSON() throws {
        let request = try oauth.request(for: .subreddit(name: "swift", sort: .hot))
        #expect(request.method == "GET")
        #expect(request.url.absoluteString == "https://oauth.reddit.com/r/swift/hot?raw_json=1")
        #expect(request.headers["Authorization"] == "bearer TOKEN-1")
        #expect(request.headers["User-Agent"] == "linux:swiftbus-feed:0.1.0 (by /u/swiftbus)")
        #expect(request.body == nil)
    }

    @Test func request_whenAnonymous_usesPublicHostJSONPathsAndNoToken() throws {
        let request = try anonymous.request(for: .subreddit(name: "swift", sort: .top(.week), page: PageRequest(limit: 50, after: "t3_1abc3")))
        #expect(request.url.absoluteString == "https://www.reddit.com/r/swift/top.json?t=week&limit=50&after=t3_1abc3&raw_json=1")
        #expect(request.headers["Authorization"] == nil)
        #expect(request.headers["User-Agent"] == "linux:swiftbus-feed:0.1.0 (by /u/swiftbus)")
    }

    @Test func request_whenListings_buildsEachPathExactly() throws {
        #expect(try url(oauth, .frontPage(sort: .best)) == "https://oauth.reddit.com/best?raw_json=1")
        #expect(try url(oauth, .frontPage(sort: .controversial(.all))) == "https://oauth.reddit.com/controversial?t=all&raw_json=1")
        #expect(try url(anonymous, .frontPage(sort: .rising)) == "https://www.reddit.com/rising.json?raw_json=1")
        #expect(
            try url(oauth, .subreddit(name: "swift", sort: .new, page: PageRequest(before: "t3_1abc1")))
                == "https://oauth.reddit.com/r/swift/new?before=t3_1abc1&raw_json=1")
        // A subreddit has no "best" page of its own: its hot listing is what Reddit serves.
        #expect(try url(oauth, .subreddit(name: "swift", sort: .best)) == "https://oauth.reddit.com/r/swift/hot?raw_json=1")
        #expect(
            try url(oauth, .subreddit(name: "swift+iOSProgramming", sort: .rising))
                == "https://oauth.reddit.com/r/swift+iOSProgramming/rising?raw_json=1")
        #expect(try url(oauth, .subredditAbout(name: "swift")) == "https://oauth.reddit.com/r/swift/about?raw_json=1")
        #expect(try url(anonymous, .subredditAbout(name: "swift")) == "https://www.reddit.com/r/swift/about.json?raw_json=1")
    }

    @Test func request_whenSearch_encodesQueryAndRestrictsToSubreddit() throws {
        #expect(
            try url(oauth, .search(query: "async/await & actors", sort: .top, time: .month))
                == "https://oauth.reddit.com/search?q=async%2Fawait%20%26%20actors&sort=top&t=month&raw_json=1")
        #expect(
            try url(anonymous, .search(query: "ünïcode?", subreddit: "swift", page: PageRequest(limit: 10)))
                == "https://www.reddit.com/r/swift/search.json?q=%C3%BCn%C3%AFcode%3F&restrict_sr=1&limit=10&raw_json=1")
    }

    @Test func request_whenComments_buildsSortFocusAndMoreChildren() throws {
        #expect(
            try url(oauth, .comments(subreddit: "swift", postID: "t3_1abc1", sort: .confidence))
                == "https://oauth.reddit.com/r/swift/comments/1abc1?sort=confidence&raw_json=1")
        #expect(
            try url(oauth, .comments(subreddit: "swift", postID: "1abc1", sort: .qa, focusCommentID: "t1_c8", depth: 4, limit: 200))
                == "https://oauth.reddit.com/r/swift/comments/1abc1?sort=qa&comment=c8&depth=4&limit=200&raw_json=1")
        #expect(
            try url(oauth, .moreChildren(postID: "1abc1", children: ["c3", "t1_c4"], sort: .top))
                == "https://oauth.reddit.com/api/morechildren?api_type=json&link_id=t3_1abc1&children=c3%2Cc4&sort=top&raw_json=1")
    }

    @Test func request_whenUserData_buildsMeSubscriptionsMultisAndUserListings() throws {
        #expect(try url(oauth, .me) == "https://oauth.reddit.com/api/v1/me?raw_json=1")
        #expect(try url(oauth, .mySubscriptions()) == "https://oauth.reddit.com/subreddits/mine/subscriber?limit=100&raw_json=1")
        #expect(
            try url(oauth, .mySubscriptions(after: "t5_2s61a"))
                == "https://oauth.reddit.com/subreddits/mine/subscriber?limit=100&after=t5_2s61a&raw_json=1")
        #expect(try url(oauth, .myMultis) == "https://oauth.reddit.com/api/multi/mine?raw_json=1")
        #expect(try url(anonymous, .userAbout(username: "alice")) == "https://www.reddit.com/user/alice/about.json?raw_json=1")
        #expect(
            try url(oauth, .user(username: "alice", listing: .submitted, sort: .top(.year), page: PageRequest(limit: 25)))
                == "https://oauth.reddit.com/user/alice/submitted?sort=top&t=year&limit=25&raw_json=1")
        #expect(try url(oauth, .user(username: "alice", listing: .overview)) == "https://oauth.reddit.com/user/alice/overview?raw_json=1")
        #expect(
            try url(oauth, .user(username: "alice", listing: .comments, sort: .new))
                == "https://oauth.reddit.com/user/alice/comments?sort=new&raw_json=1")
        #expect(try url(oauth, .user(username: "alice", listing: .saved)) == "https://oauth.reddit.com/user/alice/saved?raw_json=1")
    }

    @Test func request_whenWrites_postsFormBodies() throws {
        let vote = try oauth.request(for: .vote(fullname: "t3_1abc1", direction: .down))
        #expect(vote.method == "POST")
        #expect(vote.url.absoluteString == "https://oauth.reddit.com/api/vote?raw_json=1")
        #expect(vote.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(form(vote) == "id=t3_1abc1&dir=-1")
        #expect(form(try oauth.request(for: .vote(fullname: "t1_c1", direction: .none))) == "id=t1_c1&dir=0")
        #expect(form(try oauth.request(for: .save(fullname: "t1_c1"))) == "id=t1_c1")
        #expect(try oauth.request(for: .unsave(fullname: "t3_1abc1")).url.absoluteString == "https://oauth.reddit.com/api/unsave?raw_json=1")
        #expect(form(try oauth.request(for: .subscribe(action: .unsubscribe, subreddit: "swift"))) == "action=unsub&sr_name=swift")
        let search = try oauth.request(for: .searchSubreddits(query: "swift ui"))
        #expect(search.url.absoluteString == "https://oauth.reddit.com/api/search_subreddits?raw_json=1")
        #expect(form(search) == "query=swift+ui")
    }

    @Test func request_whenAnonymousAndUserOnly_throwsSignInRequired() {
        for endpoint: RedditEndpoint in [
            .me, .mySubscriptions(), .myMultis, .vote(fullname: "t3_1abc1", direction: .up), .save(fullname: "t3_1abc1"),
            .subscribe(action: .subscribe, subreddit: "swift"), .user(username: "alice", listing: .saved),
        ] {
            #expect(throws: RedditError.signInRequired) { try anonymous.request(for: endpoint) }
        }
    }

    @Test func request_whenBaseURLHasPathAndCustomAgent_keepsPrefix() throws {
        let agent = try RedditUserAgent(platform: "linux", appID: "feed-test", version: "2.1", username: "tester_1")
        let builder = RedditRequestBuilder(
            access: .oauth(token: "T"), userAgent: agent, oauthBaseURL: URL(string: "http://127.0.0.1:8123/reddit/")!)
        let request = try builder.request(for: .me)
        #expect(request.url.absoluteString == "http://127.0.0.1:8123/reddit/api/v1/me?raw_json=1")
        #expect(request.headers["User-Agent"] == "linux:feed-test:2.1 (by /u/tester_1)")
    }

    @Test func request_whenBadInput_throwsInvalidInputNamingTheField() {
        #expect(
            throws: RedditError.invalidInput(
                field: "subreddit", value: "../etc", rule: "2 to 21 letters, digits or underscores (several joined by +)")
        ) {
            try oauth.request(for: .subreddit(name: "../etc", sort: .hot))
        }
        #expect(throws: RedditError.invalidInput(field: "limit", value: "101", rule: "between 1 and 100")) {
            try oauth.request(for: .frontPage(sort: .hot, page: PageRequest(limit: 101)))
        }
        #expect(throws: RedditError.invalidInput(field: "token", value: "(redacted)", rule: "a non-empty token of printable ASCII")) {
            try RedditRequestBuilder(access: .oauth(token: "a\r\nX-Injected: 1")).request(for: .me)
        }
        #expect(throws: RedditError.self) { try oauth.request(for: .moreChildren(postID: "1abc1", children: [])) }
        #expect(throws: RedditError.self) { try oauth.request(for: .moreChildren(postID: "1abc1", children: (0...100).map { "c\($0)" })) }
        #expect(throws: RedditError.self) { try oauth.request(for: .vote(fullname: "t5_2qh0u", direction: .up)) }
        #expect(throws: RedditError.self) { try oauth.request(for: .search(query: "   ")) }
        #expect(throws: RedditError.self) { try oauth.request(for: .user(username: "alice", listing: .overview, sort: .rising)) }
        #expect(throws: RedditError.self) { try oauth.request(for: .subredditAbout(name: "swift+ios")) }
    }

    @Test func description_whenLogged_hidesQueryAndToken() throws {
        let request = try oauth.request(for: .search(query: "secret plans"))
        #expect(request.description == "GET https://oauth.reddit.com/search")
        #expect(RedditAccess.oauth(token: "TOKEN-1").description == "oauth(token redacted)")
    }
}
