import Bus
import BusTestSupport
import Foundation
import Testing

/// An instance whose heartbeat is late shows as late, before the kernel expires it.
@Suite(.serialized)
struct LivenessTests {
    /// Waits until the one instance of `service` is listed with `late` as given.
    func waitForInstance(_ h: Harness, _ service: String, late: Bool, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let instances = (try? await h.instances(of: service)) ?? []
            if instances.count == 1, (instances[0].late ?? false) == late { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func frozenInstance_showsLate_untilItHeartbeatsAgain() async throws {
        // Two-second heartbeats: late after 3 s, expired after 6 s, a window wide enough to see.
        try await Harness.with(kernelArguments: ["--heartbeat-ms", "2000"]) { h in
            try await h.admit("frozen")
            let service = try h.spawn(
                Binaries.testService, ["--name", "frozen", "--instance", "frozen-1"], name: "frozen",
                environment: ["BUS_HEARTBEAT_MS": "2000"])
            #expect(await waitForInstance(h, "frozen", late: false, timeout: .seconds(10)))
            service.signal(SIGSTOP)
            let sawLate = await waitForInstance(h, "frozen", late: true, timeout: .seconds(5))
            let table = try await h.busctl(["services"])
            service.signal(SIGCONT)
            #expect(sawLate, "busctl services:\n\(table.stdout)")
            let row = table.stdout.split(separator: "\n").first { $0.contains("frozen-1") } ?? ""
            // The table is read before the instance expires (6 s) only when the kernel runs
            // at its normal speed; a row that is already gone proves nothing either way.
            if !row.isEmpty { #expect(row.hasSuffix("late"), "busctl services:\n\(table.stdout)") }
            #expect(await waitForInstance(h, "frozen", late: false, timeout: .seconds(8)))
        }
    }
}
