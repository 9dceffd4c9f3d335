import Testing

@testable import Bus
@testable import BusWire
@testable import BusZMQ

/// `ZMQSocket.receive` hands out a small frame that repeats at the same position as the array
/// it made last time; every frame must still come out with exactly the bytes that were sent.
struct ZMQReceiveTests {
    @Test func repeatedAndChangingSmallFrames_comeOutWithTheirOwnBytes() throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let endpoint = "inproc://receive-\(UInt64.random(in: 0...UInt64.max))"
        let push = try ZMQSocket(context, .push)
        defer { push.close() }
        try push.bind(endpoint)
        let pull = try ZMQSocket(context, .pull)
        defer { pull.close() }
        try pull.connect(endpoint)

        let limit = ZMQSocket.recentMaxSize
        let large = [UInt8](repeating: 0x61, count: limit + 1)
        let messages: [Frames] = [
            [[], MDP.client, Array("svc".utf8), [1], large],
            [[], MDP.client, Array("svc".utf8), [1], large],  // every small frame repeats
            [[], MDP.worker, Array("svd".utf8), [2], Array(large.dropLast())],  // same sizes, other bytes
            [[], MDP.worker, Array("svd".utf8), [2], Array(large.dropLast())],  // the frame at 4 now fits: it repeats
            [MDP.worker, [], Array("a longer service name".utf8)],  // positions shift
            [[UInt8](repeating: 7, count: limit), [UInt8](repeating: 7, count: limit)],  // the largest kept size
            [[UInt8](repeating: 7, count: limit), [UInt8](repeating: 8, count: limit)],  // differs in the last byte only
            [Array("client-a".utf8), [], MDP.client, Array("svc".utf8)],  // two shapes interleaved,
            [Array("worker-b".utf8), [], MDP.worker, [3]],  // as on the kernel's ROUTER
            [Array("client-a".utf8), [], MDP.client, Array("svc".utf8)],
            [Array("worker-b".utf8), [], MDP.worker, [3]],
            [Array("client-c".utf8), [], MDP.client, Array("svd".utf8)],  // a third pushes the oldest out
            [Array("worker-b".utf8), [], MDP.worker, [3]],
            [Array("client-a".utf8), [], MDP.client, Array("svc".utf8)],
            (0..<12).map { [UInt8($0)] },  // more positions than are kept
            (0..<12).map { [UInt8($0 + 1)] },
        ]
        for message in messages { #expect(try push.send(message, dontWait: false)) }
        for message in messages {
            let received = try #require(try pull.receive(dontWait: false))
            #expect(received == message)
        }
    }
}
