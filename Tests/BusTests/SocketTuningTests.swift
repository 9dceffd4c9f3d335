import BusTestSupport
import Foundation
import Testing

@testable import Bus
@testable import BusSupport
@testable import BusZMQ

/// The reconnect back-off every socket gets: however long connecting has failed (a cut cable
/// makes every attempt fail at once), the next attempt is never more than 3 s away (2 s plus a
/// random part of up to 1 s), so a service is connected again within 3 s of its network coming back.
struct SocketTuningTests {
    @Test func connectFailingRepeatedly_nextAttemptNeverMoreThan3sAway() async throws {
        let context = ZMQContext(ioThreads: 1)
        defer { context.terminate() }
        // A port nothing listens on: every attempt is refused at once, as on a host whose link is down.
        let port = try #require(FreePorts.kernelBase())
        let socket = try ZMQSocket(context, .dealer, tuning: .default)
        defer { socket.close() }
        let monitor = try ZMQMonitor(context, target: socket, events: ZMQMonitor.Event.connectRetries, name: "retry")
        defer { monitor.close() }
        try socket.connect("tcp://127.0.0.1:\(port)")

        // libzmq reports each wait as it schedules it: a part that doubles from 1 s up to the cap,
        // plus a random part of up to 1 s. The third wait is at the cap (4-5 s with a 5 s cap).
        var waits: [Int32] = []
        let seen = await eventually(timeout: .seconds(12), every: .milliseconds(20)) {
            while let event = monitor.next() {
                if event.isConnectRetry { waits.append(event.value) }
            }
            return waits.count >= 3
        }
        let longest = waits.max() ?? 0
        #expect(seen, "only \(waits.count) connect retries reported: \(waits)")
        #expect(longest <= 3_000, "waits between attempts in ms: \(waits)")
    }
}
