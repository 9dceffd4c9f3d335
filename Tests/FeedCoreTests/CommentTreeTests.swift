import FeedCore
import Foundation
import Testing

struct CommentTreeTests {
    private func tree() throws -> CommentTree {
        try Fixture.ok("comments_1abc1.json").commentsPage(for: nil).tree
    }

    /// Each node as `id@depth`, stubs as `more:id@depth`.
    private func shape(_ tree: CommentTree) -> [String] {
        tree.nodes.map { node in
            switch node.item {
            case .comment(let comment): return "\(comment.id)@\(node.depth)"
            case .more(let more): return "more:\(more.id)@\(node.depth)"
            }
        }
    }

    private func comment(_ id: String, parent: String) -> CommentTreeItem {
        .comment(Comment(id: id, name: "t1_" + id, parentID: parent, author: "x", body: id, score: 1, createdUTC: 1))
    }

    @Test func init_whenNestedListing_flattensInReadingOrderWithStubsInPlace() throws {
        #expect(try shape(tree()) == ["c1@0", "c2@1", "more:c3@1", "c5@0", "c7@0", "c8@1", "more:_@2", "more:c9@0"])
    }

    @Test func expand_whenMoreChildrenAnswer_rebuildsTreeByParentInPlaceOfStub() throws {
        var tree = try tree()
        let stub = try #require(tree.moreStubs.first)
        let things = try Fixture.ok("morechildren_c3_c4.json").moreChildren(for: .moreChildren(postID: "1abc1", children: stub.children))
        #expect(things.count == 4)
        let expanded = tree.expand(stub, with: things)
        #expect(expanded)
        #expect(shape(tree) == ["c1@0", "c2@1", "c3@1", "c11@2", "c4@1", "more:c12@2", "c5@0", "c7@0", "c8@1", "more:_@2", "more:c9@0"])
        #expect(tree.comments.first { $0.id == "c11" }?.author == "frank")
        let again = tree.expand(stub, with: things)
        #expect(again == false)
    }

    @Test func expand_whenOnlyPartOfStubRequested_keepsTheRestAsSmallerStub() throws {
        var tree = try tree()
        let stub = try #require(tree.moreStubs.first)
        let expanded = tree.expand(stub, requested: ["c3"], with: [comment("c3", parent: "t1_c1"), comment("c11", parent: "t1_c3")])
        #expect(expanded)
        #expect(shape(tree) == ["c1@0", "c2@1", "c3@1", "c11@2", "more:c4@1", "c5@0", "c7@0", "c8@1", "more:_@2", "more:c9@0"])
        let rest = try #require(tree.moreStubs.first)
        #expect(rest == MoreComments(id: "c4", name: "t1_c4", parentID: "t1_c1", count: 6, depth: 1, children: ["c4"]))
    }

    @Test func expand_whenTopLevelStubAndReplyToOtherComment_placesEachUnderItsParent() throws {
        var tree = try tree()
        let stub = try #require(tree.moreStubs.last)
        let things = [comment("c9", parent: "t3_1abc1"), comment("c16", parent: "t1_c5"), comment("c10", parent: "t3_1abc1")]
        let expanded = tree.expand(stub, with: things)
        #expect(expanded)
        #expect(shape(tree) == ["c1@0", "c2@1", "more:c3@1", "c5@0", "c16@1", "c7@0", "c8@1", "more:_@2", "c9@0", "c10@0"])
    }

    @Test func expand_whenContinueThread_insertsParentsRepliesAtStubDepth() throws {
        var tree = try tree()
        let stub = try #require(tree.moreStubs.first { $0.isContinueThread })
        let focus = try #require(stub.threadCommentID)
        let endpoint = RedditEndpoint.comments(subreddit: "swift", postID: "1abc1", focusCommentID: focus)
        let thread = try Fixture.ok("thread_c8.json").commentsPage(for: endpoint).tree
        let expanded = tree.expand(stub, withThread: thread)
        #expect(expanded)
        #expect(shape(tree) == ["c1@0", "c2@1", "more:c3@1", "c5@0", "c7@0", "c8@1", "c14@2", "c15@3", "more:c9@0"])
    }

    @Test func expand_whenThreadLacksParent_leavesTreeUnchanged() throws {
        var tree = try tree()
        let before = tree
        let stub = try #require(tree.moreStubs.first { $0.isContinueThread })
        let expanded = tree.expand(stub, withThread: CommentTree(nodes: []))
        #expect(expanded == false)
        #expect(tree == before)
    }
}
