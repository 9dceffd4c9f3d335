import BusTestSupport
import CZeroMQ
import Foundation
import Testing

@testable import BusSupport
@testable import BusZMQ

/// A subscriber's connection to the kernel is replaced (the kernel restarted, or dropped it after
/// a pause) while the SUB holds the first frame of a message that `ZMQ_EVENTS` pre-read, and the
/// socket handles its commands before the rest is read: the sequence a client's I/O loop can
/// make. With `ZMQ_IMMEDIATE` on the SUB, libzmq 4.3 aborts the process on the next receive
/// (`Assertion failed: !_more (src/fq.cpp:112)`); with the subscriber's tuning every message
/// comes out whole.
struct SubscriberReconnectTests {
    @Test func connectionReplacedAfterFirstFramePreRead_everyMessageComesOutWhole() async throws {
        let serverContext = ZMQContext(ioThreads: 1)
        defer { serverContext.terminate() }
        let clientContext = ZMQContext(ioThreads: 1)
        defer { clientContext.terminate() }
        let port = try #require(FreePorts.kernelBase())
        let endpoint = "tcp://127.0.0.1:\(port)"

        var tuning = SocketTuning.subscriber
        tuning.reconnectIntervalMs = 100
        let sub = try ZMQSocket(clientContext, .sub, tuning: tuning)
        defer { sub.close() }
        try sub.subscribe([])
        try sub.connect(endpoint)

        let first = try ZMQSocket(serverContext, .xpub, tuning: .default)
        // Closed below to cut the connection; closing again is a no-op.
        defer { first.close() }
        try first.bind(endpoint)
        // The SUB's side runs only when it is used: keep asking it while waiting for the server.
        try await waitForSubscription(on: first, from: sub)
        let messages: [Frames] = (0..<10).map { [Array("topic".utf8), Array("body \($0)".utf8)] }
        for message in messages { #expect(try first.send(message, dontWait: false)) }
        // Readable: the SUB holds the first frame of the first message.
        try #require(try await eventually { try sub.events() & Int16(ZMQ_POLLIN) != 0 })

        first.close()
        let second = try ZMQSocket(serverContext, .xpub, tuning: .default)
        defer { second.close() }
        try #require(await eventually { (try? second.bind(endpoint)) != nil })
        // Asking for events while it reconnects makes the SUB handle the pipe's replacement.
        try await waitForSubscription(on: second, from: sub)
        _ = try sub.events()

        var received: [Frames] = []
        while let message = try sub.receive(dontWait: true) { received.append(message) }
        #expect(received == messages)
    }

    private func waitForSubscription(on server: ZMQSocket, from sub: ZMQSocket) async throws {
        let subscribed = try await eventually {
            _ = try sub.events()
            return try server.receive(dontWait: true) != nil
        }
        try #require(subscribed, "no subscription within 10 s")
    }
}
