import Bus
import BusTestSupport
import Foundation
import Testing

extension Binaries {
    /// The kit's example service (`Examples/CounterService`).
    static var counter: String { path("CounterService") }
}

/// `Examples/CounterService` as a real process: the service kit restoring before serving,
/// publishing its state retained, and keeping saved state safe from a provisional start.
@Suite(.serialized)
struct CounterServiceTests {
    struct Value: Codable, Equatable, Sendable {
        var value: Int
    }

    func startCounter(_ h: Harness) async throws -> TestProcess {
        let before = try await h.instances(of: "counter")
        try await h.admit("counter")
        let process = try h.spawn(Binaries.counter, [], name: "counter")
        let registered = await eventually(timeout: .seconds(20)) {
            ((try? await h.instances(of: "counter")) ?? []).count > before.count || !process.isRunning
        }
        guard registered, process.isRunning else { throw HarnessError("counter did not register; stderr:\n\(process.stderr)") }
        return process
    }

    func add(_ h: Harness, _ by: Int) async throws -> Value {
        try await h.client().request("counter", "add", ["by": by], timeout: .seconds(5))
    }

    func get(_ h: Harness) async throws -> Value {
        try await h.client().request("counter", "get", [String: String](), timeout: .seconds(5))
    }

    func persisted(_ h: Harness, seq: UInt64) async -> Bool {
        await eventually { storedCounter(try? await h.persistRestore("counter.state"))?.seq == seq }
    }

    @Test func killedAndStartedAgain_answersWithTheValueItHad_andAProvisionalStartNeverOverwritesIt() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            var kernel: TestProcess = h.kernel
            var persist = try await h.startPersist(stateDirectory: state.path)
            var counter = try await startCounter(h)
            #expect(try await get(h) == Value(value: 0))
            #expect(try await add(h, 5) == Value(value: 5))
            #expect(try await add(h, 2) == Value(value: 7))
            // seq 1 is the initial value published at start, then one per change.
            #expect(await persisted(h, seq: 3))
            let retained = try #require(try await h.client().retained("counter.state"))
            #expect(String(decoding: retained.payload, as: UTF8.self) == #"{"value":7}"#)
            #expect(!retained.meta.causationID.isEmpty)

            // Bad input gets a clear error and changes nothing.
            await #expect(throws: BusError.self) {
                let _: Value = try await h.client().request("counter", "add", ["by": "two"], timeout: .seconds(5))
            }

            // SIGKILL, start again: the same value, and the sequence continues.
            try await h.kill(counter, service: "counter")
            counter = try await startCounter(h)
            #expect(try await get(h) == Value(value: 7))
            #expect(try await add(h, 1) == Value(value: 8))
            #expect(await persisted(h, seq: 4))

            // persist down and the kernel's retained values gone: the counter cannot know its
            // saved value, serves provisionally, and its publishes never replace the saved one.
            persist.signal(SIGKILL)
            counter.signal(SIGKILL)
            #expect(await persist.waitForExit(timeout: .seconds(5)) != nil)
            kernel = try await h.restartKernel(kernel)
            counter = try await startCounter(h)
            #expect(try await get(h) == Value(value: 0))
            #expect(try await add(h, 100) == Value(value: 100))
            let provisional = await eventually {
                (try? await h.client().retained("counter.state"))?.meta.flags.contains(.provisional) == true
            }
            #expect(provisional)

            persist = try await h.startPersist(stateDirectory: state.path)
            let caughtUp = await eventually {
                ((try? await h.persistHistory("counter.state")) ?? []).contains { storedCounter($0)?.value == 100 }
            }
            #expect(caughtUp)
            #expect(storedCounter(try await h.persistRestore("counter.state"))?.value == 8)

            // Started again with persist up: the saved value, not the provisional one.
            try await h.kill(counter, service: "counter")
            counter = try await startCounter(h)
            #expect(try await get(h) == Value(value: 8))
            _ = kernel
        }
    }

    @Test func statsMethod_countsActionsAndRequests() async throws {
        try await Harness.with { h in
            _ = try await startCounter(h)
            _ = try await add(h, 1)
            let reply = try await h.client().call("counter", "stats", timeout: .seconds(5))
            #expect(reply.status == 200)
            let stats = try #require(try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any])
            #expect((stats["by_action"] as? [String: Any])?["addRequested"] as? Int == 1)
            #expect(stats["requests"] as? Int == 1)
        }
    }
}
