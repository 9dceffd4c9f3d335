import BusTestSupport
import Foundation
import Testing

@testable import Bus
@testable import BusZMQ

/// libzmq's I/O thread writes monitor events with a blocking send. A monitor whose reader is
/// closed while its socket lives on must not leave the socket's next event blocking that thread:
/// every connection of the context would stop with it, and no new one would ever be made (a
/// CURVE service whose worker reconnected after a pause never registered again).
struct ZMQMonitorTests {
    /// Contexts of a failed run, kept: terminating one whose I/O thread is blocked would hang.
    nonisolated(unsafe) static var stuckContexts: [ZMQContext] = []

    @Test func readerClosedBeforeItsSocket_laterEventsDoNotStopTheContext() async throws {
        let serverContext = ZMQContext(ioThreads: 1)
        defer { serverContext.terminate() }
        let server = try ZMQSocket(serverContext, .router)
        defer { server.close() }
        try server.bind("tcp://127.0.0.1:*")
        let second = try ZMQSocket(serverContext, .router)
        defer { second.close() }
        try second.bind("tcp://127.0.0.1:*")

        let context = ZMQContext(ioThreads: 1)
        let watched = try ZMQSocket(context, .dealer)
        let monitor = try ZMQMonitor(context, target: watched, events: ZMQMonitor.Event.handshakeEvents, name: "test")
        try watched.connect(server.endpoint)
        _ = try watched.send([Array("hello".utf8)])
        #expect(try await receives(server, "hello"), "the monitored socket's first message never arrived")

        // The reader goes first; the socket then makes a new connection, an event libzmq's I/O
        // thread writes towards the closed reader.
        monitor.close()
        try watched.connect(second.endpoint)

        // A socket opened afterwards in the same context still gets its message through.
        let later = try ZMQSocket(context, .dealer)
        try later.connect(server.endpoint)
        _ = try later.send([Array("after".utf8)])
        let laterGotIt = try await receives(server, "after")
        #expect(laterGotIt, "a new socket of the context never reached the server: its I/O thread is blocked")

        watched.close()
        later.close()
        if laterGotIt {
            context.terminate()
        } else {
            Self.stuckContexts.append(context)
        }
    }

    /// Whether `socket` receives a message whose last frame is `text` within 5 s.
    private func receives(_ socket: ZMQSocket, _ text: String) async throws -> Bool {
        try await eventually(timeout: .seconds(5)) {
            while let frames = try socket.receive() {
                if frames.last == Array(text.utf8) { return true }
            }
            return false
        }
    }
}
