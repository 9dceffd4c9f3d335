import Foundation
import Testing

@testable import Bus
@testable import BusKernel
@testable import BusSupport
@testable import BusWire
@testable import BusZMQ

/// Binary meta in one-frame bodies (docs/PROTOCOL.md, "Binary meta"), and how the broker keeps
/// it away from workers that did not ask for it.
struct BinaryMetaTests {
    let request = RequestBody(method: "echo", meta: RequestMeta(id: "42", timeoutMs: 1500, caller: "caller"), payload: Array(#"{"a":1}"#.utf8))

    @Test func request_binaryMeta_isTheTagThenFixedFields_andDecodesBack() throws {
        let frames = request.encode(oneFrame: true, binaryMeta: true)
        #expect(frames.count == 1)
        let meta: [UInt8] = [0x01, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0x05, 0xDC, 6] + Array("caller".utf8)
        let expected: [UInt8] = [0xB5, 4] + Array("echo".utf8) + [0, UInt8(meta.count)] + meta + request.payload
        #expect(frames[0] == expected)
        #expect(try RequestBody.decode(frames) == request)
        #expect(RequestBody.peekMeta(frames) == request.meta)
        #expect(RequestBody.binaryMetaProblem(frames) == nil)
        for body in [frames, request.encode(oneFrame: true), request.encode()] {
            #expect(RequestBody.peekTimeoutMs(body) == 1500)
        }
        let noTimeout = RequestBody(method: "m", meta: RequestMeta(id: "1")).encode(oneFrame: true, binaryMeta: true)
        #expect(RequestBody.peekTimeoutMs(noTimeout) == nil)
    }

    @Test func request_metaBinaryMetaCannotHold_staysJSON() throws {
        let cases: [RequestMeta] = [
            RequestMeta(id: "r1"), RequestMeta(id: "042"), RequestMeta(id: "18446744073709551616"), RequestMeta(id: nil, timeoutMs: 5),
            RequestMeta(id: "1", traceID: "t"), RequestMeta(id: "1", correlationID: "c"), RequestMeta(id: "1", timeoutMs: 0),
            RequestMeta(id: "1", timeoutMs: -1), RequestMeta(id: "1", timeoutMs: Int(UInt32.max) + 1),
            RequestMeta(id: "1", caller: String(repeating: "c", count: 256)),
        ]
        for meta in cases {
            let body = RequestBody(method: "m", meta: meta, payload: [7])
            let frames = body.encode(oneFrame: true, binaryMeta: true)
            #expect(frames == body.encode(oneFrame: true), "\(meta)")
            #expect(try RequestBody.decode(frames) == body)
        }
        // Three frames never carry it.
        #expect(request.encode(binaryMeta: true) == request.encode())
    }

    @Test func request_edgesOfTheFields_roundTrip() throws {
        for meta in [
            RequestMeta(id: "0"), RequestMeta(id: "18446744073709551615", timeoutMs: Int(UInt32.max)),
            RequestMeta(id: "7", caller: String(repeating: "é", count: 127)),
        ] {
            let body = RequestBody(method: "m", meta: meta)
            let frames = body.encode(oneFrame: true, binaryMeta: true)
            #expect(RequestBody.oneFrameParts(frames[0]).map { frames[0][$0.meta].first } == 0x01, "\(meta)")
            #expect(try RequestBody.decode(frames) == body)
        }
    }

    @Test func decimalIDs_areNumbers_otherIDsAreNot() {
        #expect(BinaryMeta.number("0") == 0)
        #expect(BinaryMeta.number("42") == 42)
        #expect(BinaryMeta.number("18446744073709551615") == UInt64.max)
        for id in ["", "00", "042", "-1", "+1", "4a", " 4", "18446744073709551616", "99999999999999999999", "٤"] {
            #expect(BinaryMeta.number(id) == nil, "\(id)")
        }
    }

    @Test func request_badBinaryMeta_isMalformed_notJSON() {
        let good = request.encode(oneFrame: true, binaryMeta: true)[0]
        let parts = RequestBody.oneFrameParts(good)!
        var meta = Array(good[parts.meta])
        // One byte short, one byte long, a caller that is not UTF-8.
        var variants = [Array(meta.dropLast()), meta + [0x61]]
        meta[meta.count - 1] = 0xFF
        variants.append(meta)
        for bad in variants {
            let frame = OneFrameBody.pack(headCount: 5, meta: bad, payload: []) { $0 += [4] + Array("echo".utf8) }
            #expect(RequestBody.binaryMetaProblem([frame])?.contains("binary request meta") == true)
            #expect(throws: BusError.self) { try RequestBody.decode([frame]) }
            #expect(RequestBody.peekMeta([frame]) == nil)
            #expect(RequestBody.peekTimeoutMs([frame]) == nil)
        }
    }

    @Test func reply_binaryMeta_roundTrips_elapsedAbsentOrSaturated() throws {
        let cases: [(ReplyMeta, ReplyMeta)] = [
            (ReplyMeta(id: "42", from: "svc-1", elapsedMicros: 17), ReplyMeta(id: "42", from: "svc-1", elapsedMicros: 17)),
            (ReplyMeta(id: "42", from: "kernel"), ReplyMeta(id: "42", from: "kernel")),
            (ReplyMeta(id: "1", elapsedMicros: Int(UInt32.max) + 5), ReplyMeta(id: "1", elapsedMicros: Int(UInt32.max) - 1)),
            (ReplyMeta(id: "1", elapsedMicros: -3), ReplyMeta(id: "1", elapsedMicros: 0)),
        ]
        for (sent, read) in cases {
            let reply = ReplyBody(status: 200, meta: sent, payload: [1, 2, 3])
            let frames = reply.encode(oneFrame: true, binaryMeta: true)
            #expect(frames.count == 1)
            #expect(frames[0][5] == 0x01, "\(sent)")
            #expect(try ReplyBody.decode(frames) == ReplyBody(status: 200, meta: read, payload: [1, 2, 3]))
        }
        let whole: Frames = [[], MDP.client, Array("svc".utf8)]
        #expect(ReplyBody.hasBinaryMeta(whole + ReplyBody(status: 200, meta: ReplyMeta(id: "1")).encode(oneFrame: true, binaryMeta: true), from: 3))
        #expect(!ReplyBody.hasBinaryMeta(whole + ReplyBody(status: 200, meta: ReplyMeta(id: "1")).encode(oneFrame: true), from: 3))
        #expect(!ReplyBody.hasBinaryMeta(whole + ReplyBody(status: 200, meta: ReplyMeta(id: "1")).encode(), from: 3))
        // No id, or not a decimal one: JSON.
        for meta in [ReplyMeta(from: "kernel"), ReplyMeta(id: "r1")] {
            let reply = ReplyBody(status: 404, meta: meta)
            #expect(reply.encode(oneFrame: true, binaryMeta: true) == reply.encode(oneFrame: true))
        }
    }

    @Test func reply_answersEachRequestInItsForm() throws {
        let reply = ReplyBody(status: 200, meta: ReplyMeta(id: "42", from: "w"))
        #expect(reply.encode(answering: request.encode(oneFrame: true, binaryMeta: true)) == reply.encode(oneFrame: true, binaryMeta: true))
        #expect(reply.encode(answering: request.encode(oneFrame: true)) == reply.encode(oneFrame: true))
        #expect(reply.encode(answering: request.encode()) == reply.encode())
        let message: Frames = [[], MDP.worker, [2], [9], []] + request.encode(oneFrame: true, binaryMeta: true)
        #expect(reply.encode(answering: message, from: 5) == reply.encode(oneFrame: true, binaryMeta: true))
    }

    @Test func withJSONMeta_isTheSameBodyWithItsMetaAsJSON() {
        #expect(RequestBody.withJSONMeta(request.encode(oneFrame: true, binaryMeta: true)) == request.encode(oneFrame: true))
        #expect(RequestBody.withJSONMeta(request.encode(oneFrame: true)) == nil)
        #expect(RequestBody.withJSONMeta(request.encode()) == nil)
    }

    // MARK: the broker

    let client: [UInt8] = [0, 0, 0, 1]
    let worker: [UInt8] = [0, 0, 0, 2]
    let t0 = MonotonicTime.now

    func ready(oneFrame: Bool?, binaryMeta: Bool?) -> Frames {
        let info = WorkerInfo(instance: "w", credit: 1, oneFrame: oneFrame, binaryMeta: binaryMeta)
        return [worker, [], MDP.worker, [MDP.Command.ready.rawValue], Array("echo".utf8), Array(try! JSONEncoder().encode(info))]
    }

    func sent(_ actions: [Broker.Action]) -> [Frames] {
        actions.compactMap(\.frames)
    }

    /// What a worker that said (or did not say) it reads the forms gets for a binary-meta request.
    func bodyForWorker(oneFrame: Bool?, binaryMeta: Bool?) -> Frames? {
        var broker = Broker()
        _ = broker.receive(ready(oneFrame: oneFrame, binaryMeta: binaryMeta), now: t0)
        let body = request.encode(oneFrame: true, binaryMeta: true)
        let out = sent(broker.receive([client, [], MDP.client, Array("echo".utf8)] + body, now: t0))
        guard out.count == 1, out[0][0] == worker, out[0][3] == [MDP.Command.request.rawValue] else { return nil }
        return Array(out[0].dropFirst(6))
    }

    @Test func broker_givesBinaryMeta_asItIs_onlyToAWorkerThatReadsIt() {
        #expect(bodyForWorker(oneFrame: true, binaryMeta: true) == request.encode(oneFrame: true, binaryMeta: true))
        #expect(bodyForWorker(oneFrame: true, binaryMeta: nil) == request.encode(oneFrame: true))
        #expect(bodyForWorker(oneFrame: nil, binaryMeta: nil) == request.encode())
        // binary_meta without one_frame means nothing: the three frames, JSON meta.
        #expect(bodyForWorker(oneFrame: nil, binaryMeta: true) == request.encode())
    }

    @Test func broker_readsTheDeadlineAndIdFromBinaryMeta_andAnswersInKind() throws {
        var broker = Broker()
        // No worker: the request waits until a little before the caller's 1500 ms, then 503.
        _ = broker.receive([client, [], MDP.client, Array("ghost".utf8)] + request.encode(oneFrame: true, binaryMeta: true), now: t0)
        #expect(sent(broker.tick(now: t0 + .milliseconds(1100))).filter { $0[0] == client }.isEmpty)
        let out = sent(broker.tick(now: t0 + .milliseconds(1300))).filter { $0[0] == client }
        #expect(out.count == 1)
        let body = Array(try #require(out.first).dropFirst(4))
        #expect(body.count == 1 && body[0][5] == 0x01)
        let reply = try ReplyBody.decode(body)
        #expect(reply.status == 503)
        #expect(reply.meta.id == "42")
        #expect(reply.meta.from == "kernel")
    }

    @Test func broker_refusesBadBinaryMeta_with400_andNeverDispatchesIt() throws {
        var broker = Broker()
        _ = broker.receive(ready(oneFrame: true, binaryMeta: nil), now: t0)
        let good = request.encode(oneFrame: true, binaryMeta: true)[0]
        let shortMeta = Array(good[RequestBody.oneFrameParts(good)!.meta].dropLast())
        let frame = OneFrameBody.pack(headCount: 5, meta: shortMeta, payload: []) { $0 += [4] + Array("echo".utf8) }
        let out = sent(broker.receive([client, [], MDP.client, Array("echo".utf8), frame], now: t0))
        #expect(out.count == 1)
        let reply = try #require(out.first)
        #expect(reply[0] == client)
        let body = try ReplyBody.decode(Array(reply.dropFirst(4)))
        #expect(body.status == 400)
        #expect(body.errorBody.code == "malformed")
        #expect(body.errorBody.message.contains("binary request meta"))
    }
}
