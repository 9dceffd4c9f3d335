import Bus
import BusTestSupport
import Foundation
import Testing

/// Subscriptions are checked before the kernel applies them: a prefix longer than any topic,
/// more than an owner's or the kernel's share, or one the policy refuses is refused and counted,
/// and libzmq never stores an oversized one (docs/PROTOCOL.md, Limits).
@Suite(.serialized)
struct SubscriptionLimitTests {
    func count(_ object: [String: Any], _ path: String...) -> Int {
        var value: Any? = object
        for key in path { value = (value as? [String: Any])?[key] }
        return (value as? Int) ?? -1
    }

    @Test func oversizedSubscriptions_closeTheConnection_andCostTheKernelNoMemory() async throws {
        try await Harness.with { h in
            let before = try #require(h.kernelResidentBytes())
            // 40 prefixes of 64 KiB cost the kernel about 170 MB when libzmq stored them.
            let flood = try await h.interop("sub_flood.py", ["--count", "40", "--size", "65536", "--hold", "2"], identity: "flood")
            var peak = before
            let done = await eventually(timeout: .seconds(15)) {
                peak = max(peak, h.kernelResidentBytes() ?? 0)
                return !flood.isRunning
            }
            #expect(done)
            #expect(flood.exitStatus == 0, "sub_flood.py: \(flood.stderr)")
            // Under ThreadSanitizer the kernel's shadow memory grows with whatever it touches.
            if !StatsScaleTests.underTSan { #expect(peak - before < 32 << 20, "the kernel grew by \((peak - before) >> 20) MiB") }
            let ping = try await h.client().call("bus", "ping", timeout: .seconds(2))
            #expect(ping.status == 200)
        }
    }

    @Test func subscriptionsOverTheLimits_areRefusedCounted_andFreedWhenTheSubscriberLeaves() async throws {
        let arguments = ["--max-subscriptions-per-owner", "50", "--max-subscriptions", "80"]
        try await Harness.with(kernelArguments: arguments) { h in
            let long = try await h.interop("sub_flood.py", ["--count", "20", "--size", "300", "--hold", "30"], identity: "longsub")
            let many = try await h.interop("sub_flood.py", ["--count", "70", "--size", "24", "--hold", "30"], identity: "manysub")
            var gate: [String: Any] = [:]
            let refused = await eventually {
                gate = (try? await h.kernelStatsSection("subscribing")) ?? [:]
                return count(gate, "refused", "too_long") == 20 && count(gate, "refused", "owner_limit") == 20
            }
            #expect(refused, "bus.stats subscribing: \(gate)")
            #expect(count(gate, "live") == 50)
            #expect(h.kernel.stderr.contains("refused a subscription"))
            // Refused subscriptions are not applied: the subscriptions list holds the accepted ones.
            let stats = try await h.kernelStats()
            let prefixes = (stats["subscriptions"] as? [[String: Any]]) ?? []
            #expect(prefixes.count == 50)
            await long.stop()
            await many.stop()
            let freed = await eventually {
                gate = (try? await h.kernelStatsSection("subscribing")) ?? [:]
                return count(gate, "live") == 0 && count(gate, "refused_held") == 0
            }
            #expect(freed, "bus.stats subscribing after the subscribers left: \(gate)")
            // The limits leave room again: a new subscriber gets the topic's value (as a snapshot,
            // or live when its subscription landed before the publish).
            let publisher = h.client(name: "pub")
            try await publisher.publish("limits.state", ["v": 1], retain: true)
            let collector = Collector(try h.client(name: "sub").subscribe("limits.state"))
            #expect(await eventually { collector.all.contains { $0.topic == "limits.state" } })
            collector.stop()
        }
    }

    @Test func refusedSubscriptionsHeldByLibzmq_pastTheLimit_closeEveryConnection() async throws {
        let arguments = ["--max-subscriptions-per-owner", "50", "--max-subscriptions", "80"]
        try await Harness.with(kernelArguments: arguments) { h in
            let flood = try await h.interop("sub_flood.py", ["--count", "200", "--size", "24", "--hold", "30"], identity: "flood")
            var gate: [String: Any] = [:]
            let rebound = await eventually {
                gate = (try? await h.kernelStatsSection("subscribing")) ?? [:]
                return count(gate, "rebinds") >= 1
            }
            #expect(rebound, "bus.stats subscribing: \(gate)")
            await flood.stop()
            let ping = try await h.client().call("bus", "ping", timeout: .seconds(2))
            #expect(ping.status == 200)
        }
    }
}
