import Bus
import BusTestSupport
import Foundation
import Testing

/// `bus.stats` and `bus.retained {"pattern"}` stay bounded (under the 1 MiB frame limit, a
/// bounded walk per call) whatever the number of subscriptions, topics and retained values.
@Suite(.serialized)
struct StatsScaleTests {
    static let underTSan = ProcessInfo.processInfo.environment["BUS_TEST_TSAN"] == "1"

    @Test func stats_with30000SubscriptionsAnd2000Topics_isBounded_pagedAndQuick() async throws {
        let arguments = ["--max-subscriptions-per-owner", "100000"]
        try await Harness.with(kernelArguments: arguments) { h in
            let flood = try await h.interop("sub_flood.py", ["--count", "30000", "--size", "24", "--hold", "60"], identity: "flood")
            let publisher = h.client(name: "scale")
            for index in 0..<2000 { try await publisher.publish("scale.topic\(index)", ["n": index]) }
            let applied = await eventually(timeout: .seconds(30), every: .milliseconds(300)) {
                let gate = (try? await h.kernelStatsSection("subscribing")) ?? [:]
                return (gate["live"] as? Int ?? 0) >= 30000
            }
            #expect(applied)
            let started = ContinuousClock.now
            let reply = try await h.client().call("bus", "stats", timeout: .seconds(5))
            let elapsed = ContinuousClock.now - started
            #expect(reply.status == 200)
            #expect(reply.payload.count < 1 << 20, "bus.stats answered \(reply.payload.count) bytes")
            if !Self.underTSan { #expect(elapsed < .milliseconds(500), "bus.stats took \(elapsed)") }
            let stats = try #require(try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any])
            let topics = (stats["topics"] as? [[String: Any]]) ?? []
            #expect(topics.count == 50)
            #expect((stats["topics_total"] as? Int ?? 0) >= 2000)
            #expect((stats["subscriptions"] as? [Any])?.count == 100)
            #expect((stats["subscriptions_total"] as? Int ?? 0) >= 30000)
            // The work of the call: the page's topics and the most used prefixes, not the 32 000
            // entries the kernel holds.
            let walked = try #require(stats["walked"] as? Int, "bus.stats reports the entries it looked at")
            #expect(walked <= 50 + 1 + 100 + 100, "bus.stats walked \(walked) entries")
            // The next page starts after the last topic of this one.
            let next = try #require(stats["topics_next"] as? String)
            #expect(next == topics.last?["topic"] as? String)
            let params = try JSONSerialization.data(withJSONObject: ["after": next, "limit": 10])
            let second = try await h.client().call("bus", "stats", payload: Array(params), timeout: .seconds(5))
            let secondStats = try #require(try JSONSerialization.jsonObject(with: Data(second.payload)) as? [String: Any])
            let secondTopics = ((secondStats["topics"] as? [[String: Any]]) ?? []).compactMap { $0["topic"] as? String }
            #expect(secondTopics.count == 10)
            #expect(secondTopics.allSatisfy { $0 > next })
            let table = try await h.busctl(["stats"], timeout: .seconds(20))
            #expect(table.status == 0, "busctl stats: \(table.stderr)")
            #expect(table.stdout.contains("of \(stats["topics_total"] as? Int ?? 0) topics"))
            await flood.stop()
        }
    }

    struct Filled: Encodable {
        var n: Int
        var fill: String
    }

    @Test func retainedPattern_overOneMiBOfValues_comesInPagesUnderTheLimit_andTheClientReadsThemAll() async throws {
        try await Harness.with { h in
            let publisher = h.client(name: "big")
            let huge = String(repeating: "h", count: 600_000)
            try await publisher.publish("big.huge", Filled(n: -1, fill: huge), retain: true)
            let fill = String(repeating: "x", count: 8_000)
            let topics = (0..<300).map { "big.value\(1000 + $0)" }
            for (index, topic) in topics.enumerated() { try await publisher.publish(topic, Filled(n: index, fill: fill), retain: true) }
            #expect(await eventually(timeout: .seconds(20)) { (try? await h.client().retained(topics[299])) != nil })

            let reply = try await h.client().call("bus", "retained", payload: Array(#"{"pattern": "big.>"}"#.utf8), timeout: .seconds(5))
            #expect(reply.status == 200)
            #expect(reply.payload.count < 1 << 20, "bus.retained answered \(reply.payload.count) bytes")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any])
            let values = (page["values"] as? [[String: Any]]) ?? []
            #expect(values.first?["topic"] as? String == "big.huge" && values.first?["too_large"] as? Bool == true)
            #expect(values.count > 1 && values.count < 301)
            #expect(page["next"] as? String == values.last?["topic"] as? String)

            let all = try await h.client().retainedValues(matching: "big.>", timeout: .seconds(5))
            #expect(all.map(\.topic) == ["big.huge"] + topics)
            #expect(all.first?.payload.count ?? 0 > 600_000, "the value too large for a page was read by topic")
        }
    }
}
