import Bus
import BusTestSupport
import Foundation
import Testing

/// A kernel killed and started again gets every retained value back from `persist`, with its
/// sequence number and meta, within seconds; only `persist` may refill it.
@Suite(.serialized)
struct KernelRestartTests {
    /// The kernel's retained value of `topic`, waiting for it up to `timeout`.
    /// (With `seq`, that sequence number.)
    func retained(_ client: BusClient, _ topic: String, seq: UInt64?, within timeout: Duration) async -> RetainedValue? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = try? await client.retained(topic, timeout: .milliseconds(500)), seq == nil || value.meta.seq == seq {
                return value
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// Whether persist saved `topic` at `seq` within 10 s.
    func saved(_ h: Harness, _ topic: String, seq: Int) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let restored = try? await h.persist("restore", ["topic": topic], retryFor: .zero)
            if restored?["seq"] as? Int == seq { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    @Test func kernelKilledAndRestarted_getsEveryRetainedValueBack_fromPersist() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            try await h.startPersist(stateDirectory: state.path)
            let publisher = h.client(name: "restart")
            for value in 1...3 { try await publisher.publish("restart.a", ["v": value], retain: true) }
            try await publisher.publish("restart.b", ["v": 10], retain: true)
            let before = try #require(await retained(publisher, "restart.a", seq: 3, within: .seconds(5)))
            #expect(await saved(h, "restart.a", seq: 3), "persist did not save restart.a")
            let observer = h.client(name: "observer")
            let kernel = try await h.restartKernel(h.kernel)
            #expect(kernel.isRunning)
            let after = await retained(observer, "restart.a", seq: nil, within: .seconds(10))
            let back = after != nil
            #expect(back, "no retained value of restart.a 10 s after the kernel restarted")
            #expect(after?.meta.seq == before.meta.seq)
            #expect(after?.meta.source == before.meta.source)
            #expect(after?.meta.instance == before.meta.instance)
            #expect(after?.payload == before.payload)
            #expect((try? await observer.retained("restart.b"))?.meta.seq == 1)
            // A subscriber that comes now gets the value as the current one.
            let collector = Collector(try observer.subscribe("restart.>"))
            #expect(await eventually { collector.all.contains { $0.topic == "restart.a" && $0.meta.seq == before.meta.seq } })
            collector.stop()
            if h.keys != nil {
                // Only persist may refill: any other identity is refused.
                let values = try JSONSerialization.data(withJSONObject: ["values": [before.jsonObject()]])
                let refused = try await observer.call("bus", "refill", payload: Array(values))
                #expect(refused.status == 403)
            }
        }
    }
}
