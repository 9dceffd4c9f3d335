import Foundation
import Testing

@testable import Bus
@testable import BusKernel
@testable import BusSupport
@testable import BusWire
@testable import BusZMQ

/// The one-frame form of request and reply bodies (docs/PROTOCOL.md, "One-frame bodies"), and
/// how the broker keeps it away from workers that did not ask for it.
struct OneFrameBodyTests {
    let request = RequestBody(
        method: "echo", meta: RequestMeta(id: "r1", timeoutMs: 1000, caller: "c"), payload: Array(#"{"a":1}"#.utf8))

    @Test func request_oneFrame_isTheMarkerThenLengthPrefixedParts_andDecodesBack() throws {
        let frames = request.encode(oneFrame: true)
        #expect(frames.count == 1)
        let meta = request.meta.json()
        let expected: [UInt8] = [0xB5, 4] + Array("echo".utf8) + [UInt8(meta.count >> 8), UInt8(meta.count & 0xFF)] + meta + request.payload
        #expect(frames[0] == expected)
        #expect(try RequestBody.decode(frames) == request)
        // Inside a whole worker message, from the body's first frame.
        let message: Frames = [[], MDP.worker, [2], [9], []] + frames
        #expect(try RequestBody.decode(message, from: 5) == request)
    }

    @Test func request_threeFrames_ofAOneFrameBody_areTheThreeFrameEncoding() throws {
        #expect(RequestBody.threeFrames(request.encode(oneFrame: true)) == request.encode())
        #expect(RequestBody.threeFrames(request.encode()) == nil)
        let empty = RequestBody(method: "ping")
        #expect(RequestBody.threeFrames(empty.encode(oneFrame: true)) == [Array("ping".utf8), Array("{}".utf8), []])
    }

    @Test func request_peeks_readTheMethodAndMetaOfEitherForm() {
        for oneFrame in [false, true] {
            let body = request.encode(oneFrame: oneFrame)
            #expect(RequestBody.peekMethod(body, from: 0) == "echo")
            #expect(RequestBody.peekMeta(body) == request.meta)
        }
        #expect(RequestBody.peekMethod([], from: 0) == "")
        #expect(RequestBody.peekMethod([[0xB5, 9]], from: 0) == "")
    }

    @Test func request_tooLongForOneFrame_fallsBackToThreeFrames() throws {
        let long = RequestBody(method: String(repeating: "m", count: 256), meta: RequestMeta(id: "x"))
        #expect(long.encode(oneFrame: true).count == 3)
        #expect(try RequestBody.decode(long.encode(oneFrame: true)) == long)
    }

    @Test func request_truncatedOrMethodlessOneFrame_isMalformed() {
        let whole = request.encode(oneFrame: true)[0]
        for cut in [1, 3, 5, 10, 20] {
            #expect(throws: BusError.self, "cut to \(cut) bytes") { try RequestBody.decode([Array(whole.prefix(cut))]) }
        }
        #expect(throws: BusError.self) { try RequestBody.decode([[0xB5, 0, 0, 0]]) }
        // Not UTF-8 method.
        #expect(throws: BusError.self) { try RequestBody.decode([[0xB5, 1, 0xFF, 0, 0]]) }
        // A marker frame among several is not the one-frame form: its method is not UTF-8.
        #expect(throws: BusError.self) { try RequestBody.decode([whole, Array("{}".utf8), []]) }
    }

    @Test func reply_oneFrame_roundTrips_andStatusPeeks() throws {
        let reply = ReplyBody.error(503, code: "worker_lost", message: "gone", id: "r1", from: "kernel")
        let frames = reply.encode(oneFrame: true)
        #expect(frames.count == 1)
        #expect(Array(frames[0].prefix(3)) == [0xB5, 0x01, 0xF7])
        #expect(try ReplyBody.decode(frames) == reply)
        #expect(ReplyBody.peekStatus(frames) == 503)
        #expect(ReplyBody.peekStatus(reply.encode()) == 503)
        // A status outside 100-999 is never put in the one-frame form.
        #expect(ReplyBody(status: 1000).encode(oneFrame: true).count == 3)
    }

    @Test func reply_truncatedOneFrame_isMalformed() {
        let whole = ReplyBody(status: 200, meta: ReplyMeta(id: "x"), payload: [1, 2]).encode(oneFrame: true)[0]
        for cut in [1, 2, 4, 8] {
            #expect(throws: BusError.self, "cut to \(cut) bytes") { try ReplyBody.decode([Array(whole.prefix(cut))]) }
        }
        #expect(throws: BusError.self) { try ReplyBody.decode([[0xB5, 0, 99, 0, 0]]) }
    }

    // MARK: the broker

    let client: [UInt8] = [0, 0, 0, 1]
    let worker: [UInt8] = [0, 0, 0, 2]
    let t0 = MonotonicTime.now

    func ready(oneFrame: Bool?) -> Frames {
        let info = WorkerInfo(instance: "w", credit: 1, oneFrame: oneFrame)
        return [worker, [], MDP.worker, [MDP.Command.ready.rawValue], Array("echo".utf8), Array(try! JSONEncoder().encode(info))]
    }

    func sent(_ actions: [Broker.Action]) -> [Frames] {
        actions.compactMap(\.frames)
    }

    /// The body a worker is sent for a one-frame request.
    func bodyForWorker(oneFrame: Bool?) -> Frames? {
        var broker = Broker()
        _ = broker.receive(ready(oneFrame: oneFrame), now: t0)
        let out = sent(broker.receive([client, [], MDP.client, Array("echo".utf8)] + request.encode(oneFrame: true), now: t0))
        guard out.count == 1, out[0][0] == worker, out[0][3] == [MDP.Command.request.rawValue] else { return nil }
        return Array(out[0].dropFirst(6))
    }

    @Test func broker_givesAOneFrameRequest_asItIs_onlyToAWorkerThatReadsIt() {
        #expect(bodyForWorker(oneFrame: true) == request.encode(oneFrame: true))
        #expect(bodyForWorker(oneFrame: nil) == request.encode())
        #expect(bodyForWorker(oneFrame: false) == request.encode())
    }

    @Test func broker_answersEachRequestInItsOwnForm() throws {
        for oneFrame in [false, true] {
            var broker = Broker()
            // No worker: the request waits until a little before the caller's 1000 ms (read
            // from its meta in either form), then gets 503.
            _ = broker.receive([client, [], MDP.client, Array("ghost".utf8)] + request.encode(oneFrame: oneFrame), now: t0)
            #expect(sent(broker.tick(now: t0 + .milliseconds(700))).filter { $0[0] == client }.isEmpty)
            let out = sent(broker.tick(now: t0 + .milliseconds(800))).filter { $0[0] == client }
            #expect(out.count == 1)
            let body = Array(out[0].dropFirst(4))
            #expect(body.count == (oneFrame ? 1 : 3))
            let reply = try ReplyBody.decode(body)
            #expect(reply.status == 503)
            #expect(reply.meta.id == "r1")
        }
    }

    @Test func broker_answersAnUnreadableRequest_inItsForm() throws {
        for oneFrame in [false, true] {
            var broker = Broker()
            // An empty service name: 400 malformed, in the form of the body that came with it.
            let out = sent(broker.receive([client, [], MDP.client, []] + request.encode(oneFrame: oneFrame), now: t0))
            #expect(out.count == 1)
            let body = try #require(out.first.map { Array($0.dropFirst(4)) })
            #expect(body.count == (oneFrame ? 1 : 3))
            #expect(try ReplyBody.decode(body).status == 400)
        }
    }

    @Test func broker_mmiService_readsTheNameFromAOneFrameBody() {
        var broker = Broker()
        _ = broker.receive(ready(oneFrame: true), now: t0)
        let asked = RequestBody(method: "echo").encode(oneFrame: true)
        let out = sent(broker.receive([client, [], MDP.client, Array("mmi.service".utf8)] + asked, now: t0))
        #expect(out.first.map { Array($0.dropFirst(4)) } == [Array("200".utf8)])
    }
}
