import BusTestSupport
import Foundation
import Testing

@testable import Bus
@testable import BusSupport
@testable import BusWire
@testable import BusZMQ

/// The request DEALER has `ZMQ_IMMEDIATE` off (``SocketTuning/subscriber`` says why), so
/// libzmq would queue a request while the kernel is away and deliver it whenever a kernel comes
/// back. The requester hands a request to libzmq only while its socket's monitor reports a
/// connection: one whose deadline passed unsent was never sent, and no kernel sees it later,
/// whether the kernel was not there yet or went away. A plain ROUTER stands in for the kernel.
struct RequesterConnectionTests {
    @Test func aRequestWhoseDeadlinePassedWithoutAConnection_neverReachesAKernelThatComesLater() async throws {
        let port = try #require(FreePorts.kernelBase())
        let endpoint = "tcp://127.0.0.1:\(port)"
        let endpoints = Endpoints(requests: endpoint, eventsIn: "tcp://127.0.0.1:\(port + 1)", eventsOut: "tcp://127.0.0.1:\(port + 2)")
        let client = BusClient(options: BusOptions(endpoints: endpoints, name: "t"))
        let context = ZMQContext(ioThreads: 1)
        defer { context.terminate() }
        do {
            // Not there yet.
            try await expectUnreachable(client, "early")
            try await withStandIn(context, endpoint) { router in
                try await expectFirst(router, client, "late", not: "early")
            }
            // Gone: the client learns the connection closed, and holds what is asked meanwhile.
            let gone = await eventually(timeout: .seconds(15)) {
                do {
                    _ = try await client.call("svc", "probe", timeout: .milliseconds(300))
                    return false
                } catch {
                    guard case BusError.unreachable = error else { return false }
                    return true
                }
            }
            try #require(gone, "calls were still sent after the stand-in closed")
            try await expectUnreachable(client, "away")
            try await withStandIn(context, endpoint) { router in
                try await expectFirst(router, client, "back", not: "away")
            }
        } catch {
            await client.close()
            throw error
        }
        await client.close()
    }

    private func expectUnreachable(_ client: BusClient, _ method: String) async throws {
        await #expect {
            _ = try await client.call("svc", method, timeout: .milliseconds(300))
        } throws: { error in
            guard case BusError.unreachable = error else { return false }
            return true
        }
    }

    /// A ROUTER bound on `endpoint` for the time of `body`.
    private func withStandIn(_ context: ZMQContext, _ endpoint: String, _ body: (ZMQSocket) async throws -> Void) async throws {
        let router = try ZMQSocket(context, .router, tuning: .default)
        defer { router.close() }
        // The port of a closed ROUTER may take a moment to be free again.
        try #require(await eventually { (try? router.bind(endpoint)) != nil })
        try await body(router)
    }

    /// Calls `method` and expects it to be the first request `router` receives, with no trace of
    /// `old` before it. A probe may come first: one sent before the client learnt that the
    /// last stand-in closed waited in libzmq's queue (its outcome was unknown to its caller).
    private func expectFirst(_ router: ZMQSocket, _ client: BusClient, _ method: String, not old: String) async throws {
        let call = Task { try? await client.call("svc", method, timeout: .seconds(20)) }
        defer { call.cancel() }
        var first: Frames?
        let received = try await eventually(timeout: .seconds(15)) {
            while let frames = try router.receive(dontWait: true) {
                if !frames.flatMap({ $0 }).contains(subsequence: Array("probe".utf8)) {
                    first = frames
                    return true
                }
            }
            return false
        }
        try #require(received, "no request reached the stand-in kernel")
        let bytes = try #require(first).flatMap { $0 }
        #expect(bytes.contains(subsequence: Array(method.utf8)))
        #expect(!bytes.contains(subsequence: Array(old.utf8)))
        call.cancel()
        _ = await call.value
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return subsequence.isEmpty }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
