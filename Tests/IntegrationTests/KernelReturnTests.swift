import Bus
import BusTestSupport
import Foundation
import Testing

/// An owner of retained state publishes it again when a restarted kernel comes back
/// (`BusClient.onKernelReturn`, the service kit's `republishAll`): found by the fault run.
@Suite(.serialized)
struct KernelReturnTests {
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

    func kernelValue(_ h: Harness) async -> Int? {
        guard let event = try? await h.client().retained("counter.state", timeout: .seconds(1)) else { return nil }
        return try? JSONDecoder().decode(Value.self, from: Data(event.payload)).value
    }

    @Test func kernelKilledWhilePersistWasDown_ownerPublishesAgain_soTheAcknowledgedChangeSurvivesTheOwnersRestart() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            let persist = try await h.startPersist(stateDirectory: state.path)
            var counter = try await startCounter(h)
            #expect(try await add(h, 5) == Value(value: 5))
            #expect(await eventually { storedCounter(try? await h.persistRestore("counter.state"))?.value == 5 })

            // persist down: the acknowledged change reaches the kernel only, then the kernel dies.
            try await h.kill(persist, service: "persist")
            #expect(try await add(h, 100) == Value(value: 105))
            #expect(await eventually { await kernelValue(h) == 105 })
            _ = try await h.restartKernel(h.kernel)

            // persist comes back with the 5 it committed and refills the new kernel with it; the
            // counter has published its 105 again, which both keep.
            try await h.startPersist(stateDirectory: state.path)
            #expect(await eventually(timeout: .seconds(15)) { storedCounter(try? await h.persistRestore("counter.state"))?.value == 105 })
            #expect(await eventually { await kernelValue(h) == 105 })

            try await h.kill(counter, service: "counter")
            counter = try await startCounter(h)
            let restored: Value = try await h.client().request("counter", "get", [String: String](), timeout: .seconds(5))
            #expect(restored == Value(value: 105), "the acknowledged change was lost")
        }
    }
}
