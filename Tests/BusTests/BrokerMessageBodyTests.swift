import CZeroMQ
import Foundation
import Testing

@testable import BusKernel
@testable import BusSupport
@testable import BusWire
@testable import BusZMQ

/// Bodies the kernel routes in the message libzmq received them in
/// (``Broker/receive(_:last:now:into:)``): every message gives the same frames out as when it
/// is handed over as frames, a one-frame body reaches a worker that reads it (and the caller
/// its reply) still in a message, and what the broker keeps of a request it sent stays readable.
struct BrokerMessageBodyTests {
    let client: [UInt8] = [0, 0, 0, 1]
    let worker: [UInt8] = [0, 0, 0, 2]
    let t0 = MonotonicTime.now
    let request = RequestBody(
        method: "echo", meta: RequestMeta(id: "42", timeoutMs: 1500, caller: "caller"),
        payload: [UInt8](repeating: 0x61, count: 10_000))

    func ready(oneFrame: Bool?, binaryMeta: Bool?, credit: Int = 1) -> Frames {
        let info = WorkerInfo(instance: "w", credit: credit, oneFrame: oneFrame, binaryMeta: binaryMeta)
        return [worker, [], MDP.worker, [MDP.Command.ready.rawValue], Array("echo".utf8), Array(try! JSONEncoder().encode(info))]
    }

    var clientRequest: Frames { [client, [], MDP.client, Array("echo".utf8)] + request.encode(oneFrame: true, binaryMeta: true) }

    func workerReply(status: Int) -> Frames {
        let reply = ReplyBody(status: status, meta: ReplyMeta(id: "42", from: "w"), payload: [UInt8](repeating: 0x62, count: 9_000))
        return [worker, [], MDP.worker, [MDP.Command.reply.rawValue], client, []] + reply.encode(oneFrame: true, binaryMeta: true)
    }

    /// Hands `frames` over as the kernel does without security: a last frame at position 4 or
    /// later that is over 8 KiB goes in a message.
    func receive(_ broker: inout Broker, _ frames: Frames, now: MonotonicTime) -> [Broker.Action] {
        var actions: [Broker.Action] = []
        if frames.count > 4, let last = frames.last, last.count > ZMQMessage.sharedBufferLimit {
            broker.receive(Array(frames.dropLast()), last: ZMQMessage(last), now: now, into: &actions)
        } else {
            broker.receive(frames, last: nil, now: now, into: &actions)
        }
        return actions
    }

    func published(_ actions: [Broker.Action]) -> [String] {
        actions.compactMap { if case .publish(let topic, _) = $0 { topic } else { nil } }
    }

    func messageBody(_ action: Broker.Action) -> ZMQMessage? {
        switch action {
        case .request(_, _, .message(let message)), .reply(_, _, .message(let message)): message
        default: nil
        }
    }

    @Test func everyWorkerKind_getsTheSameFrames_whetherTheBodyCameInAMessageOrNot() {
        for (oneFrame, binaryMeta) in [(true, true), (true, nil), (nil, nil)] as [(Bool?, Bool?)] {
            var byFrames = Broker()
            var byMessage = Broker()
            _ = byFrames.receive(ready(oneFrame: oneFrame, binaryMeta: binaryMeta), now: t0)
            _ = receive(&byMessage, ready(oneFrame: oneFrame, binaryMeta: binaryMeta), now: t0)
            let expected = byFrames.receive(clientRequest, now: t0)
            let actions = receive(&byMessage, clientRequest, now: t0)
            #expect(actions.compactMap(\.frames) == expected.compactMap(\.frames))
            #expect(actions.compactMap(\.frames).count == 1)
            // Only a worker that reads the request as it came gets it still in a message.
            #expect((actions.compactMap(messageBody).count == 1) == (oneFrame == true && binaryMeta == true))

            let expectedReply = byFrames.receive(workerReply(status: 200), now: t0)
            let reply = receive(&byMessage, workerReply(status: 200), now: t0)
            #expect(reply.compactMap(\.frames) == expectedReply.compactMap(\.frames))
            #expect(reply.compactMap(messageBody).count == 1)
        }
    }

    @Test func replyInAMessage_isCountedByItsStatus() throws {
        var broker = Broker()
        _ = receive(&broker, ready(oneFrame: true, binaryMeta: true), now: t0)
        _ = receive(&broker, clientRequest, now: t0)
        let out = receive(&broker, workerReply(status: 503), now: t0)
        #expect(out.compactMap(messageBody).count == 1)
        let snapshot = try #require(broker.snapshot(now: t0).first)
        #expect(snapshot.errors == 1)
        #expect(snapshot.instances.first?.failed == 1)
        #expect(snapshot.instances.first?.handled == 1)
    }

    @Test func requestSentInAMessage_isStillAnsweredInItsForm_whenItsWorkerGoes() throws {
        var broker = Broker()
        _ = receive(&broker, ready(oneFrame: true, binaryMeta: true), now: t0)
        let dispatched = receive(&broker, clientRequest, now: t0)
        let sent = try #require(dispatched.compactMap(messageBody).first)
        // Sent (as the kernel does) before its worker goes.
        try withPair { sender, receiver throws in
            #expect(try sender.send(sent, more: false))
            #expect(try receiver.receive(dontWait: false) == [request.encode(oneFrame: true, binaryMeta: true)[0]])
        }
        let out = broker.evict(worker: worker, now: t0, reason: "revoked").compactMap(\.frames).filter { $0[0] == client }
        #expect(out.count == 1)
        let reply = try ReplyBody.decode(Array(try #require(out.first).dropFirst(4)))
        #expect(reply.status == 503)
        #expect(reply.errorBody.code == "worker_lost")
        #expect(reply.meta.id == "42")
    }

    /// The deadline of a request that waits is read from its body in place (binary meta), or
    /// from its JSON meta, for a caller the broker already knows (its first request reads the
    /// whole meta for its name).
    @Test func queuedRequestInAMessage_waitsUntilJustBeforeItsOwnTimeout() {
        for binaryMeta in [true, false] {
            var broker = Broker()
            let body = request.encode(oneFrame: true, binaryMeta: binaryMeta)
            _ = receive(&broker, [client, [], MDP.client, Array("other".utf8)] + body, now: t0)
            _ = receive(&broker, [client, [], MDP.client, Array("ghost".utf8)] + body, now: t0)
            let early = broker.tick(now: t0 + .milliseconds(1100)).compactMap(\.frames).filter { $0[0] == client }
            #expect(early.isEmpty, "binary meta: \(binaryMeta)")
            let due = broker.tick(now: t0 + .milliseconds(1300)).compactMap(\.frames).filter { $0[0] == client }
            #expect(due.count == 2, "binary meta: \(binaryMeta)")
        }
    }

    /// Messages whose large last frame is not a one-frame body the broker routes as it came
    /// give the same actions as when they are handed over as frames: a three-frame body, a
    /// READY whose service name is the large frame, a REPLY short of its delimiter, the
    /// kernel's own service and 8/MMI, and JSON meta for workers that read one-frame bodies or
    /// neither form.
    @Test func everyOtherMessage_givesTheSameActions_whetherItsLastFrameCameInAMessageOrNot() {
        let large = [UInt8](repeating: 0x61, count: 9_000)
        let threeFrames = request.encode()
        let jsonMeta = request.encode(oneFrame: true)
        let mmiBody = RequestBody(method: "echo", meta: RequestMeta(id: "1"), payload: large).encode(oneFrame: true, binaryMeta: true)
        let sequences: [[Frames]] = [
            [ready(oneFrame: true, binaryMeta: true), [client, [], MDP.client, Array("echo".utf8)] + threeFrames],
            [[worker, [], MDP.worker, [MDP.Command.ready.rawValue], large]],
            [ready(oneFrame: true, binaryMeta: true), clientRequest, [worker, [], MDP.worker, [MDP.Command.reply.rawValue], client, large]],
            [[client, [], MDP.client, Array("bus".utf8)] + mmiBody],
            [ready(oneFrame: true, binaryMeta: true), [client, [], MDP.client, Array("mmi.service".utf8)] + mmiBody],
            [ready(oneFrame: nil, binaryMeta: nil), [client, [], MDP.client, Array("echo".utf8)] + jsonMeta],
            [ready(oneFrame: true, binaryMeta: nil), [client, [], MDP.client, Array("echo".utf8)] + jsonMeta],
            [ready(oneFrame: nil, binaryMeta: nil), clientRequest],
            [ready(oneFrame: true, binaryMeta: nil), clientRequest],
        ]
        for (index, sequence) in sequences.enumerated() {
            var byFrames = Broker()
            var byMessage = Broker()
            for frames in sequence {
                let expected = byFrames.receive(frames, now: t0)
                #expect(receive(&byMessage, frames, now: t0) == expected, "sequence \(index)")
                #expect(!expected.isEmpty, "sequence \(index)")
            }
        }
    }

    /// The kernel's receive keeps a last frame at the body's position in a message only when
    /// it is over 8 KiB (a smaller one may share libzmq's receive buffer, and copying it costs
    /// less); every other frame comes as an array, in order.
    @Test func receive_keepsOnlyALargeLastFrame_atTheBodysPosition_inAMessage() throws {
        let limit = ZMQMessage.sharedBufferLimit
        try withPair { sender, receiver throws in
            let head: Frames = [[1], [], Array("MDPC01".utf8), Array("echo".utf8)]
            for (frames, kept) in [
                (head + [[UInt8](repeating: 7, count: limit)], false),
                (head + [[UInt8](repeating: 7, count: limit + 1)], true),
                (Array(head.prefix(3)) + [[UInt8](repeating: 7, count: limit + 1)], false),  // before the body's position
                (head + [[UInt8](repeating: 7, count: limit + 1), [1]], false),  // not the last frame
            ] {
                #expect(try sender.send(frames, dontWait: false))
                let received = try #require(try receiver.receive(dontWait: false, property: nil, lastAsMessage: 4))
                #expect((received.last != nil) == kept)
                #expect(received.frames + (received.last.map { [$0.bytes] } ?? []) == frames)
            }
        }
    }

    @Test func otherMessagesWithALargeLastFrame_areHandledAsFrames() {
        // A READY whose metadata is the large last frame registers its worker as it says.
        var broker = Broker()
        let padded = #"{"instance":"w","one_frame":true,"binary_meta":true,"padding":""# + String(repeating: "p", count: 9_000) + #""}"#
        let large: Frames = [worker, [], MDP.worker, [MDP.Command.ready.rawValue], Array("echo".utf8), Array(padded.utf8)]
        #expect(published(receive(&broker, large, now: t0)) == ["bus.service.up"])
        #expect(broker.snapshot(now: t0).first?.instances.first?.binaryMeta == true)
        // A message of another protocol is rejected for what it is.
        let strange: Frames = [client, [], Array("XYZ".utf8), [1], [UInt8](repeating: 0, count: 9_000)]
        var byFrames = Broker()
        #expect(receive(&broker, strange, now: t0) == byFrames.receive(strange, now: t0))
        // So is a bad binary meta in a body that came in a message.
        let good = request.encode(oneFrame: true, binaryMeta: true)[0]
        let shortMeta = Array(good[RequestBody.oneFrameParts(good)!.meta].dropLast())
        let bad = OneFrameBody.pack(headCount: 5, meta: shortMeta, payload: [UInt8](repeating: 0x61, count: 9_000)) { $0 += [4] + Array("echo".utf8) }
        let refused = receive(&broker, [client, [], MDP.client, Array("echo".utf8), bad], now: t0)
        #expect(refused == byFrames.receive([client, [], MDP.client, Array("echo".utf8), bad], now: t0))
        #expect(refused.compactMap(\.frames).first.flatMap { ReplyBody.peekStatus(Array($0.dropFirst(4))) } == 400)
    }

    private func withPair(_ body: (ZMQSocket, ZMQSocket) throws -> Void) throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let endpoint = "inproc://message-body-\(UInt64.random(in: 0...UInt64.max))"
        let receiver = try ZMQSocket(context, .pair)
        defer { receiver.close() }
        try receiver.bind(endpoint)
        let sender = try ZMQSocket(context, .pair)
        defer { sender.close() }
        try sender.connect(endpoint)
        try body(sender, receiver)
    }
}
