import FeedCore
import Foundation
import Testing

struct ModelDecodingTests {
    private let endpoint = RedditEndpoint.subreddit(name: "swift", sort: .hot)

    @Test func posts_whenListing_decodesFieldsCursorAndLikesEdited() throws {
        let listing = try Fixture.ok("subreddit_hot.json").listing(of: Post.self, for: endpoint)
        #expect(listing.after == "t3_1abc3")
        #expect(listing.before == nil)
        #expect(listing.children.map(\.name) == ["t3_1abc1", "t3_1abc2", "t3_1abc3"])
        let link = listing.children[0]
        #expect(link.title == "Swift 6.2 is out")
        #expect(link.upvoteRatio == 0.97)
        #expect(link.created == Date(timeIntervalSince1970: 1_735_689_600))
        #expect(link.likes == nil)
        #expect(link.edited == nil)
        #expect(link.isSelf == false)
        let question = listing.children[1]
        #expect(question.title == "Ask: actors & \"Sendable\" <T>")
        #expect(question.selftext == "How do I *share* state?\n\n> quoted")
        #expect(question.likes == true)
        #expect(question.saved)
        #expect(question.edited == 1_735_700_000.5)
        #expect(question.linkFlairText == "Question")
        let pinned = listing.children[2]
        #expect(pinned.likes == false)
        #expect(pinned.stickied && pinned.over18)
        #expect(pinned.thumbnail == "nsfw")
        #expect(pinned.score == -3)
    }

    @Test func listing_whenEncodedAndDecoded_roundTrips() throws {
        let listing = try Fixture.ok("subreddit_hot.json").listing(of: Post.self, for: endpoint)
        let again = try JSONDecoder().decode(Listing<Post>.self, from: JSONEncoder().encode(listing))
        #expect(again == listing)
        let page = try Fixture.ok("comments_1abc1.json").commentsPage(for: nil)
        #expect(try JSONDecoder().decode(CommentsPage.self, from: JSONEncoder().encode(page)) == page)
    }

    @Test func post_whenEditedIsTrueOrRequiredFieldMissing_isInvalidResponse() throws {
        let edited =
            #"{"kind":"Listing","data":{"after":null,"children":[{"kind":"t3","data":{"id":"1","name":"t3_1","subreddit":"s","title":"t","author":"a","score":1,"num_comments":0,"created_utc":1.0,"permalink":"/p","url":"u","edited":true}}]}}"#
        #expect(throws: RedditError.self) { try RedditResponse(status: 200, body: Data(edited.utf8)).listing(of: Post.self, for: nil) }
        let missing = #"{"kind":"Listing","data":{"after":null,"children":[{"kind":"t3","data":{"id":"1","name":"t3_1"}}]}}"#
        do {
            _ = try RedditResponse(status: 200, body: Data(missing.utf8)).listing(of: Post.self, for: nil)
            Issue.record("decoded a post without its fields")
        } catch {
            guard case .invalidResponse(200, let excerpt) = error else { throw error }
            #expect(excerpt.hasPrefix("missing 'subreddit' at 'data.children.0.data'"))
        }
    }

    @Test func listing_whenChildOfWrongKind_isInvalidResponse() {
        let body = #"{"kind":"Listing","data":{"after":null,"children":[{"kind":"t5","data":{}}]}}"#
        #expect(throws: RedditError.self) { try RedditResponse(status: 200, body: Data(body.utf8)).listing(of: Post.self, for: nil) }
    }

    @Test func commentsPage_whenTwoElementArray_decodesPostAndNestedReplies() throws {
        let page = try Fixture.ok("comments_1abc1.json").commentsPage(for: .comments(subreddit: "swift", postID: "1abc1"))
        #expect(page.post.name == "t3_1abc1")
        #expect(page.post.numComments == 14)
        let comments = page.tree.comments
        #expect(comments.map(\.id) == ["c1", "c2", "c5", "c7", "c8"])
        #expect(comments.allSatisfy { $0.replies == nil })
        #expect(comments[0].body == "Finally!")
        #expect(comments[1].isSubmitter)
        #expect(comments[2].author == "[deleted]")
        #expect(comments[3].likes == true)
        #expect(comments[3].edited == 1_735_691_234)
        #expect(comments[4].likes == false)
        #expect(comments[4].saved)
    }

    @Test func comment_whenRepliesEmptyStringOrListing_decodes() throws {
        let data = try Fixture.data("comments_1abc1.json")
        struct Pair: Decodable {
            var comments: Listing<CommentTreeItem>
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                _ = try container.decode(Listing<Post>.self)
                comments = try container.decode(Listing<CommentTreeItem>.self)
            }
        }
        let top = try JSONDecoder().decode(Pair.self, from: data).comments.children
        guard case .comment(let first) = top[0], case .comment(let deleted) = top[1], case .more(let more) = top[3] else {
            Issue.record("unexpected kinds \(top.map(\.kind))")
            return
        }
        #expect(first.replies?.children.count == 2)
        #expect(deleted.replies == nil)
        #expect(more == MoreComments(id: "c9", name: "t1_c9", parentID: "t3_1abc1", count: 3, depth: 0, children: ["c9", "c10"]))
    }

    @Test func moreStubs_whenContinueThread_isRecognized() throws {
        let page = try Fixture.ok("comments_1abc1.json").commentsPage(for: nil)
        let stubs = page.tree.moreStubs
        #expect(stubs.map(\.id) == ["c3", "_", "c9"])
        #expect(stubs[0].children == ["c3", "c4"])
        #expect(stubs[0].count == 7)
        #expect(stubs[0].isContinueThread == false)
        #expect(stubs[1].isContinueThread)
        #expect(stubs[1].threadCommentID == "c8")
        #expect(stubs[1].count == 0)
    }

    @Test func account_whenMeOrUserAbout_decodes() throws {
        let me = try Fixture.ok("me.json").account(for: .me)
        #expect(
            me
                == Account(
                    id: "abc12", name: "alice", createdUTC: 1_420_070_400,
                    iconImg: "https://www.redditstatic.com/avatars/avatar_default_01_A5A4A4.png", linkKarma: 120, commentKarma: 3400,
                    totalKarma: 3520, hasSubscribed: true, isSuspended: false))
        let bob = try Fixture.ok("user_about.json").account(for: .userAbout(username: "bob"))
        #expect(bob.name == "bob")
        #expect(bob.commentKarma == 50)
    }

    @Test func subredditAbout_whenWrappedT5_decodes() throws {
        let about = try Fixture.ok("about_swift.json").subredditAbout(for: .subredditAbout(name: "swift"))
        #expect(about.displayName == "swift")
        #expect(about.name == "t5_2qh0u")
        #expect(about.subscribers == 120_000)
        #expect(about.userIsSubscriber == nil)
        #expect(about.over18 == false)
    }

    @Test func multis_whenMine_decodesMembers() throws {
        let multis = try Fixture.ok("multis_mine.json").multis(for: .myMultis)
        #expect(multis.count == 1)
        #expect(multis[0].displayName == "Swift things")
        #expect(multis[0].path == "/user/alice/m/swiftthings")
        #expect(multis[0].subredditNames == ["swift", "iOSProgramming"])
    }

    @Test func subredditSearch_whenResults_decodes() throws {
        let results = try Fixture.ok("search_subreddits.json").subredditSearch(for: .searchSubreddits(query: "swift"))
        #expect(
            results == [
                SubredditSearchResult(name: "swift", subscriberCount: 120_000, activeUserCount: 310, iconImg: "", keyColor: "#ff4500"),
                SubredditSearchResult(
                    name: "swiftui", subscriberCount: 60000, activeUserCount: 120, iconImg: "https://b.thumbs.redditmedia.com/x.png", keyColor: ""),
            ])
    }

    @Test func userOverview_whenMixedKinds_decodesPostsAndComments() throws {
        let listing = try Fixture.ok("user_overview.json").listing(of: UserContentItem.self, for: .user(username: "alice", listing: .overview))
        #expect(listing.children.map(\.name) == ["t1_c20", "t3_1abc9"])
        guard case .comment(let comment) = listing.children[0] else {
            Issue.record("first item is not a comment")
            return
        }
        #expect(comment.depth == nil)
        #expect(comment.linkTitle == "Swift 6.2 is out")
    }

    @Test func acknowledgement_whenEmptyObject_succeeds() throws {
        try RedditResponse(status: 200, body: Data("{}".utf8)).acknowledgement(for: .save(fullname: "t3_1abc1"))
        #expect(throws: RedditError.self) { try RedditResponse(status: 200, body: Data("[]".utf8)).acknowledgement(for: nil) }
    }
}
