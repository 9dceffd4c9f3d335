import FeedCore
import Foundation
import Testing

struct SubscriptionCollectorTests {
    @Test func add_whenPagesFollowAfterUntilNull_mergesAndSortsIgnoringCase() throws {
        var collector = SubscriptionCollector()
        #expect(collector.nextEndpoint == .mySubscriptions(after: nil))
        let first = try Fixture.ok("subscriptions_page1.json").subscriptionsPage(for: .mySubscriptions())
        let next = try collector.add(first)
        #expect(next == .mySubscriptions(after: "t5_2s61a"))
        #expect(collector.isComplete == false)
        let second = try Fixture.ok("subscriptions_page2.json").subscriptionsPage(for: .mySubscriptions(after: "t5_2s61a"))
        let last = try collector.add(second)
        #expect(last == nil)
        #expect(collector.isComplete)
        #expect(collector.nextEndpoint == nil)
        #expect(collector.collected.map(\.displayName) == ["swift", "iOSProgramming", "linux", "apple"])
        #expect(collector.subscriptions.map(\.displayName) == ["apple", "iOSProgramming", "linux", "swift"])
    }

    @Test func add_whenCursorRepeats_throwsInsteadOfLooping() throws {
        var collector = SubscriptionCollector()
        let page = try Fixture.ok("subscriptions_page1.json").subscriptionsPage(for: .mySubscriptions())
        try collector.add(page)
        do {
            try collector.add(page)
            Issue.record("a repeated cursor was followed")
        } catch {
            #expect(error == .invalidResponse(status: 200, excerpt: "subscriptions page cursor t5_2s61a came back twice"))
        }
        #expect(collector.collected.count == 2)
    }

    @Test func sortedByName_whenOnlyCaseDiffers_isStable() {
        let names = ["b", "A", "a", "B"].map { Subreddit(name: "t5_" + $0, displayName: $0, title: $0, url: "/r/\($0)/") }
        #expect(SubscriptionCollector.sortedByName(names).map(\.displayName) == ["A", "a", "B", "b"])
    }
}
