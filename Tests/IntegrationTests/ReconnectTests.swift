import Bus
import BusTestSupport
import Foundation
import Testing

/// A service whose kernel is gone backs off its connection attempts, and still registers
/// within seconds once a kernel is back.
@Suite(.serialized)
struct ReconnectTests {
    @Test func portThatAcceptsAndCloses_getsAFewAttemptsASecond_andTheKernelAfterItSeesTheService() async throws {
        let h = try Harness()
        do {
            let port = try #require(Int(h.kernelURL.split(separator: ":").last ?? ""))
            let seconds = 6.0
            let script = Harness.interopFolder.appendingPathComponent("accept_close.py").path
            let listener = try h.spawn(Binaries.python, [script, "--port", String(port), "--seconds", String(seconds)], name: "accept_close")
            #expect(await eventually { h.jsonLines(listener).contains { $0["listening"] != nil } })
            try h.authorize("patient")
            let service = try h.spawn(Binaries.testService, ["--name", "patient", "--instance", "patient-1"], name: "patient")
            #expect(await listener.waitForExit(timeout: .seconds(seconds + 10)) == 0)
            let accepted = try #require(h.jsonLines(listener).compactMap { $0["accepted"] as? Int }.first)
            // A service has a handful of sockets (worker, requests, events in and out); each
            // tries about once a second at most against such a port (libzmq's 100 ms made it 5 to 10 times a second).
            #expect(Double(accepted) / seconds < 3, "\(accepted) connection attempts in \(seconds) s")
            #expect(service.isRunning)
            try await h.startKernel()
            let registered = await eventually(timeout: .seconds(15)) {
                ((try? await h.instances(of: "patient")) ?? []).count == 1
            }
            #expect(registered, "the service did not register with the kernel that came back")
        } catch {
            await h.shutdown()
            throw error
        }
        await h.shutdown()
    }
}
