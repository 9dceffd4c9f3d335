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
/// connection: one whose deadline passed unsent was never sent, and no kernel sees it later.
/// A plain ROUTER stands in for the kernel.
struct RequesterConnectionTests {
    @Test func aRequestWhoseDeadlinePassedWithoutAConnection_neverReachesAKernelThatComesLater() async throws {
        let port = try #require(FreePorts.kernelBase())
        let endpoint = "tcp://127.0.0.1:\(port)"
        let endpoints = Endpoints(requests: endpoint, eventsIn: "tcp://127.0.0.1:\(port + 1)", eventsOut: "tcp://127.0.0.1:\(port + 2)")
        let client = BusClient(options: BusOptions(endpoints: endpoints, name: "t"))

        await #expect {
            _ = try await client.call("svc", "early", timeout: .milliseconds(300))
        } throws: { error in
            guard case BusError.unreachable = error else { return false }
            return true
        }

        let context = ZMQContext(ioThreads: 1)
        defer { context.terminate() }
        let router = try ZMQSocket(context, .router, tuning: .default)
        defer { router.close() }
        try router.bind(endpoint)
        let late = Task { try? await client.call("svc", "late", timeout: .seconds(20)) }
        defer { late.cancel() }

        // The first request the stand-in sees is the one made while it was there.
        var first: Frames?
        let received = try await eventually(timeout: .seconds(15)) {
            first = try router.receive(dontWait: true)
            return first != nil
        }
        try #require(received, "no request reached the stand-in kernel")
        let frames = try #require(first)
        let bytes = frames.flatMap { $0 }
        #expect(bytes.contains(subsequence: Array("late".utf8)))
        #expect(!bytes.contains(subsequence: Array("early".utf8)))
        late.cancel()
        _ = await late.value
        await client.close()
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return subsequence.isEmpty }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
