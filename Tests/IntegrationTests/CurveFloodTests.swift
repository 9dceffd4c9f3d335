import Bus
import BusTestSupport
import Foundation
import Testing

/// A signed-in client keeps calling a service through a CURVE kernel while 200 hostile
/// connections (garbage bytes, greetings that stall, handshakes with unknown keys) come and go:
/// every call is answered, the refusals are counted, the kernel's memory stays bounded. The
/// latencies with and without the flood are printed (docs/RELIABILITY.md), not asserted: on a
/// 2-core machine the flooding process itself takes CPU from the caller.
@Suite(.serialized)
struct CurveFloodTests {
    struct Latencies: CustomStringConvertible {
        var samples: [Duration]
        var failures: Int

        func percentile(_ p: Double) -> Duration {
            let sorted = samples.sorted()
            guard !sorted.isEmpty else { return .zero }
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }

        var description: String {
            "p50 \(Self.ms(percentile(0.5))) ms, p99 \(Self.ms(percentile(0.99))) ms, \(samples.count) ok, \(failures) failed"
        }

        static func ms(_ d: Duration) -> String {
            String(format: "%.2f", Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
        }
    }

    /// Sequential calls for `seconds`: a time window, so the flooded phase covers many turns of
    /// the flood's recycling and each percentile stands on thousands of calls.
    static func measure(_ bus: BusClient, seconds: Double) async -> Latencies {
        var result = Latencies(samples: [], failures: 0)
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int(seconds * 1000))
        var n = 0
        while clock.now < end {
            n += 1
            let started = clock.now
            let reply = try? await bus.call("testsvc", "echo", payload: Array("{\"n\":\(n)}".utf8), timeout: .seconds(5))
            if reply?.status == 200 { result.samples.append(clock.now - started) } else { result.failures += 1 }
        }
        return result
    }

    @Test func twoHundredHostileConnections_leaveEveryCallAnswered_andTheKernelBounded() async throws {
        try await Harness.with(secure: true) { h in
            try await h.startTestService()
            let bus = h.client(name: "test")
            // Quiet before and after the flood (pooled, so a change in the machine's load over the
            // run weighs on both sides), flooded in between.
            let window = ProcessInfo.processInfo.environment["BUS_TEST_TSAN"] != nil ? 2.0 : 4.0
            _ = await Self.measure(bus, seconds: 0.2)
            var quiet = await Self.measure(bus, seconds: window)
            let residentBefore = try #require(h.kernelResidentBytes())

            let script = Harness.interopFolder.appendingPathComponent("handshake_flood.py").path
            let serverKey = h.keys!.appendingPathComponent("kernel.key").path
            let flood = try h.spawn(
                Binaries.python,
                [script, "--kernel", h.kernelURL, "--server-key", serverKey, "--connections", "200", "--seconds", "120"],
                name: "handshake_flood")
            #expect(await eventually(timeout: .seconds(20)) { flood.stdout.contains("\"ready\"") || !flood.isRunning }, "\(flood.stderr)")
            let flooded = await Self.measure(bus, seconds: 2 * window)
            let residentDuring = try #require(h.kernelResidentBytes())
            flood.signal(SIGTERM)
            #expect(await flood.waitForExit(timeout: .seconds(10)) == 0, "handshake_flood.py: \(flood.stderr)")
            let opened = h.jsonLines(flood).last ?? [:]
            let after = await Self.measure(bus, seconds: window)
            quiet.samples += after.samples
            quiet.failures += after.failures

            let ratio = flooded.percentile(0.99) / max(quiet.percentile(0.99), .microseconds(1))
            print(
                "curve flood: quiet \(quiet); flooded \(flooded); p99 ratio \(String(format: "%.2f", ratio)); opened \(opened); kernel RSS \(residentBefore / 1_048_576) -> \(residentDuring / 1_048_576) MiB"
            )
            #expect(quiet.failures == 0 && flooded.failures == 0, "quiet: \(quiet); flooded: \(flooded)")
            #expect(residentDuring - residentBefore < 64 * 1_048_576, "kernel grew from \(residentBefore) to \(residentDuring) bytes")
            #expect((opened["unknown_keys"] as? Int ?? 0) >= 66 && (opened["garbage"] as? Int ?? 0) >= 66)
            let security = try await h.kernelStatsSection("security")
            #expect((security["zap_denied"] as? Int ?? 0) > 0, "\(security)")
            #expect(h.kernel.isRunning)
        }
    }
}
