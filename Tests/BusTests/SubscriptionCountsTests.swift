import Testing

@testable import Bus
@testable import BusKernel

/// Subscription prefixes grouped by how many hold each: the most used read from the top counts
/// down, looking at the few picked rather than every prefix.
struct SubscriptionCountsTests {
    @Test func mostUsed_picksTheHighestCountsFirst_andWalksOnlyWhatItPicks() {
        var counts = SubscriptionCounts()
        for index in 0..<10_000 { counts.add(Array("flood.\(index)".utf8)) }
        for _ in 0..<3 { counts.add(Array("feed.".utf8)) }
        for _ in 0..<2 { counts.add(Array("auth.".utf8)) }
        let top = counts.mostUsed(5)
        #expect(top.entries.count == 5)
        #expect(top.entries.prefix(2).map { String(decoding: $0.prefix, as: UTF8.self) } == ["feed.", "auth."])
        #expect(top.entries.map(\.count) == [3, 2, 1, 1, 1])
        #expect(top.walked <= 3 + 5, "walked \(top.walked) of \(counts.count) prefixes")
        #expect(counts.count == 10_002)
    }

    @Test func remove_lowersTheCount_andDropsAPrefixNobodyHolds() {
        var counts = SubscriptionCounts()
        counts.add(Array("a.".utf8))
        counts.add(Array("a.".utf8))
        counts.add(Array("b.".utf8))
        counts.remove(Array("a.".utf8))
        counts.remove(Array("b.".utf8))
        counts.remove(Array("never.".utf8))
        #expect(counts[Array("a.".utf8)] == 1 && counts[Array("b.".utf8)] == nil && counts.count == 1)
        #expect(counts.mostUsed(10).entries.map(\.count) == [1])
        counts.removeAll()
        #expect(counts.count == 0 && counts.mostUsed(10).entries.isEmpty)
    }
}
