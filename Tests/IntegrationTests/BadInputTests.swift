import Bus
import BusTestSupport
import BusWire
import BusZMQ
import Foundation
import Testing

/// A raw libzmq socket for sending what the library itself never would.
final class RawSocket: @unchecked Sendable {
    // @unchecked: used by one test task at a time; the context is thread-safe.
    let context = ZMQContext()
    let socket: ZMQSocket

    init(_ type: ZMQSocketType, connect endpoint: String, maxMessageSize: Int64 = -1, harness: Harness? = nil) throws {
        var tuning = SocketTuning.default
        tuning.maxMessageSize = maxMessageSize
        socket = try ZMQSocket(context, type, tuning: tuning)
        if let keys = harness?.keys {
            let security = try ClientSecurity.load(keys: keys, identity: "test")
            try socket.makeCurveClient(security.keyPair, serverKey: security.serverKey)
        }
        try socket.connect(endpoint)
    }

    func send(_ frames: Frames) throws { _ = try socket.send(frames, dontWait: false) }

    /// Waits for a message, polling without blocking.
    func receive(timeout: Duration = .seconds(5)) async throws -> Frames? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let frames = try socket.receive() { return frames }
            try await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    func close() {
        socket.close()
        context.terminate()
    }
}

@Suite(.serialized)
struct BadInputTests {
    func alive(_ h: Harness) async -> Bool {
        guard h.kernel.isRunning else { return false }
        return (try? await h.client().call("bus", "ping", timeout: .seconds(2)))?.status == 200
    }

    @Test func garbageBytes_onEveryPort_areSurvived() async throws {
        try await Harness.with { h in
            for endpoint in [h.endpoints.requests, h.endpoints.eventsIn, h.endpoints.eventsOut] {
                let port = UInt16(endpoint.split(separator: ":").last!)!
                for payload in [
                    Array(repeating: UInt8(0xff), count: 4096), Array("GET / HTTP/1.1\r\n\r\n".utf8),
                    (0..<512).map { _ in UInt8.random(in: 0...255) },
                ] {
                    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                    var addr = sockaddr_in()
                    addr.sin_family = sa_family_t(AF_INET)
                    addr.sin_port = port.bigEndian
                    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
                    let rc = withUnsafePointer(to: &addr) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                    }
                    #expect(rc == 0)
                    _ = payload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    close(fd)
                }
            }
            #expect(await alive(h))
        }
    }

    @Test func truncatedAndWrongHeaderRequests_getAnErrorOrAreCounted() async throws {
        try await Harness.with { h in
            let raw = try RawSocket(.dealer, connect: h.endpoints.requests, harness: h)
            defer { raw.close() }
            // MDPC01 without a service frame: a 400 reply, not silence.
            try raw.send([[], MDP.client])
            let reply = try #require(try await raw.receive())
            #expect(reply.count >= 4)
            #expect(String(decoding: reply[3], as: UTF8.self) == "400")
            // No empty delimiter, wrong header, unknown worker command: dropped and counted.
            try raw.send([MDP.client, Array("svc".utf8)])
            try raw.send([[], Array("MDPC99".utf8), Array("svc".utf8)])
            try raw.send([[], MDP.worker, [0x09]])
            #expect(
                await eventually {
                    ((try? await h.kernelStats())?["requests"] as? [String: Any])?["rejected"] as? Int ?? 0 >= 4
                })
            #expect(await alive(h))
        }
    }

    @Test func invalidJSON_inARequest_gets400_andTheServiceKeepsServing() async throws {
        try await Harness.with { h in
            try await h.startTestService()
            let bus = h.client()
            let bad = try await bus.call("testsvc", "sleep", payload: Array("{nope".utf8))
            #expect(bad.status == 400)
            #expect(bad.errorBody.code == "invalid_json")
            let badMeta = try await bus.rawRequest("testsvc", body: [Array("echo".utf8), Array("{meta".utf8), []])
            #expect(String(decoding: badMeta[0], as: UTF8.self) == "400")
            let wrongShape = try await bus.call("testsvc", "sleep", payload: Array(#"{"ms":"soon"}"#.utf8))
            #expect(wrongShape.status == 400)
            #expect(wrongShape.errorBody.code == "invalid_request")
            #expect(try await bus.call("testsvc", "echo", payload: Array("{}".utf8)).status == 200)
        }
    }

    @Test func oversizedMessages_disconnectTheSender_andOthersAreServed() async throws {
        try await Harness.with { h in
            let big = [UInt8](repeating: 0x41, count: 2 << 20)
            let request = try RawSocket(.dealer, connect: h.endpoints.requests, harness: h)
            defer { request.close() }
            try request.send([[], MDP.client, Array("bus".utf8), Array("ping".utf8), [], big])
            #expect(try await request.receive(timeout: .milliseconds(500)) == nil)
            let publisher = try RawSocket(.pub, connect: h.endpoints.eventsIn, harness: h)
            defer { publisher.close() }
            let meta = EventMeta(seq: 1, timestampMicros: 1, source: "big", instance: "b").encode()
            try publisher.send([Array("big.t".utf8), meta, big])
            #expect(await alive(h))
            let stats = try await h.kernelStats()
            let topics = stats["topics"] as? [[String: Any]] ?? []
            #expect(!topics.contains { $0["topic"] as? String == "big.t" })
        }
    }

    @Test func malformedEvents_areDroppedAndCounted_goodOnesFlow() async throws {
        try await Harness.with { h in
            let sub = try h.client(name: "sub").subscribe(">")
            let collector = Collector(sub)
            try await sub.confirm()
            // A plain publisher: wait until the kernel's subscription reaches it.
            let raw = try RawSocket(.xpub, connect: h.endpoints.eventsIn, harness: h)
            defer { raw.close() }
            _ = try await raw.receive()
            let good = EventMeta(seq: 1, timestampMicros: 1, source: "raw", instance: "r").encode()
            try raw.send([Array("ok.t".utf8), good])  // two frames
            try raw.send([Array("ok.t".utf8), [1, 2, 3], []])  // meta too short
            try raw.send([Array("Bad Topic".utf8), good, []])  // topic breaks the rules
            var wrongVersion = good
            wrongVersion[0] = 7
            try raw.send([Array("ok.t".utf8), wrongVersion, []])
            try raw.send([Array("ok.t".utf8), good, Array("{}".utf8), []])  // four frames
            try raw.send([Array("ok.t".utf8), good, Array("{}".utf8)])
            #expect(await collector.waitFor(count: 1))
            #expect(collector.live.map(\.topic) == ["ok.t"])
            let events = try await h.kernelStats()["events"] as? [String: Any]
            #expect(events?["malformed"] as? Int == 5)
            collector.stop()
        }
    }
}
