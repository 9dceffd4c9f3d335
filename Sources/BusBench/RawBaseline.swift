import BusSupport
import BusWire
import BusZMQ
import CZeroMQ
import Foundation

/// The raw-libzmq baselines of `busctl bench`: the same transport, frames and sizes as the bus path, with only
/// the ZeroMQ layer (no kernel logic, no client library), each socket on its own thread.
///
/// Each role (publisher, forwarder, every subscriber; requester, forwarder, worker) has its own
/// ZeroMQ context, and so its own libzmq I/O thread, as the separate processes of the bus path
/// and of any brokered deployment have. (One shared context would move every TCP transfer of
/// the run onto a single libzmq I/O thread, a topology no brokered bus can have.)
public enum RawBaseline {
    /// A forwarder on its own thread: `zmq_proxy_steerable` between two bound sockets.
    final class Proxy: @unchecked Sendable {
        // @unchecked: sockets are created here and then used only by the proxy thread; the
        // control socket is used only by `stop()`, after start returned.
        let context: ZMQContext
        let frontend: String
        let backend: String
        private let control: ZMQSocket
        private let done = DispatchSemaphore(value: 0)

        init(context: ZMQContext, frontendType: ZMQSocketType, backendType: ZMQSocketType, port: Int) throws {
            self.context = context
            frontend = "tcp://127.0.0.1:\(port)"
            backend = "tcp://127.0.0.1:\(port + 1)"
            // The bus's default high-water marks (10 000), so both sides queue alike.
            let tuning = SocketTuning.default
            let front = try ZMQSocket(context, frontendType, tuning: tuning)
            let back = try ZMQSocket(context, backendType, tuning: tuning)
            if backendType == .xpub {
                try back.set(ZMQ_XPUB_NODROP, 1)
                try back.set(ZMQ_XPUB_VERBOSE, 1)
            }
            try front.bind(frontend)
            try back.bind(backend)
            let controlEndpoint = "inproc://bench.proxy.\(port)"
            let peer = try ZMQSocket(context, .pair, tuning: tuning)
            try peer.bind(controlEndpoint)
            control = try ZMQSocket(context, .pair, tuning: tuning)
            try control.connect(controlEndpoint)
            let sockets = UncheckedBox((front, back, peer))
            let done = self.done
            Thread.detachNewThread {
                let (front, back, peer) = sockets.value
                zmq_proxy_steerable(front.raw, back.raw, nil, peer.raw)
                front.close()
                back.close()
                peer.close()
                done.signal()
            }
        }

        func stop() {
            _ = try? control.send([Array("TERMINATE".utf8)], dontWait: false)
            done.wait()
            control.close()
        }
    }

    /// The topic of the baseline's readiness probes (not counted).
    static let probeTopic = Array("bench.p".utf8)

    /// The frames of one bench event as the bus's publisher sends them: the topic `bench.t`, the
    /// binary meta and a `size`-byte payload. The C baseline publishes the same frames.
    public static func eventFrames(size: Int, seq: UInt64) -> Frames {
        let meta = EventMeta(seq: seq, timestampMicros: 0, source: "bench", instance: "bench-raw").encode()
        return [Array("bench.t".utf8), meta, [UInt8](repeating: 0x61, count: size)]
    }

    /// PUB (an XPUB that waits for the subscription, with NODROP for lossless backpressure) ->
    /// XSUB/XPUB proxy -> `subscribers` SUBs. Returns messages/s delivered in total and losses.
    public static func pubsub(size: Int, seconds: Double, subscribers: Int, port: Int) throws -> (rate: Double, lost: Int) {
        let proxyContext = ZMQContext(ioThreads: 1)
        defer { proxyContext.terminate() }
        let proxy = try Proxy(context: proxyContext, frontendType: .xsub, backendType: .xpub, port: port)
        defer { proxy.stop() }
        let stop = Flag()
        let counts = Counters(subscribers)
        let ready = DispatchGroup()
        let finished = DispatchGroup()
        for index in 0..<subscribers {
            ready.enter()
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                let context = ZMQContext(ioThreads: 1)
                defer { context.terminate() }
                guard let sub = try? ZMQSocket(context, .sub, tuning: .default) else { ready.leave(); return }
                defer { sub.close() }
                try? sub.set(ZMQ_RCVTIMEO, 200)
                try? sub.connect(proxy.backend)
                try? sub.subscribe(Array("bench.".utf8))
                ready.leave()
                var msg = zmq_msg_t()
                zmq_msg_init(&msg)
                defer { zmq_msg_close(&msg) }
                var received = 0
                var first: UInt64 = 0
                var last: UInt64 = 0
                var part = 0
                var isProbe = false
                while true {
                    let rc = zmq_msg_recv(&msg, sub.raw, 0)
                    if rc < 0 {
                        if stop.isSet { break }
                        continue
                    }
                    if part == 0 {
                        isProbe = zmq_msg_size(&msg) == probeTopic.count && memcmp(zmq_msg_data(&msg), probeTopic, probeTopic.count) == 0
                    }
                    guard zmq_msg_more(&msg) == 0 else {
                        part += 1
                        continue
                    }
                    part = 0
                    if isProbe {
                        counts.probed(index)
                    } else {
                        received += 1
                        last = WallClock.nanos()
                        if first == 0 { first = last }
                    }
                }
                counts.set(index, received: received, first: first, last: last)
            }
        }
        ready.wait()
        // The publisher: wait until every subscription reached it, then send for `seconds`.
        let context = ZMQContext(ioThreads: 1)
        defer { context.terminate() }
        let pub = try ZMQSocket(context, .xpub, tuning: .default)
        defer { pub.close() }
        try pub.set(ZMQ_XPUB_NODROP, 1)
        try pub.set(ZMQ_XPUB_VERBOSE, 1)
        try pub.connect(proxy.frontend)
        try pub.set(ZMQ_RCVTIMEO, 5000)
        // The forwarder sends its subscriptions once (merged) when the publisher connects; then
        // probes go out until every subscriber has one, so none misses the start.
        _ = try pub.receive(dontWait: false)
        let probe: Frames = [probeTopic, [], []]
        let probeDeadline = WallClock.nanos() + 5_000_000_000
        while !counts.allProbed, WallClock.nanos() < probeDeadline {
            _ = try pub.send(probe, dontWait: true)
            Thread.sleep(forTimeInterval: 0.005)
        }
        let frames = eventFrames(size: size, seq: 1)
        let end = WallClock.nanos() + UInt64(seconds * 1e9)
        var sent = 0
        // Blocking sends, as a plain libzmq publisher would: with NODROP a full pipe blocks the
        // thread until there is room (a non-blocking send would spin on EAGAIN and take CPU
        // from the forwarder and subscribers on this 2-core machine).
        try pub.set(ZMQ_SNDTIMEO, 1000)
        while WallClock.nanos() < end {
            for _ in 0..<256 {
                if try pub.send(frames, dontWait: false) { sent += 1 }
            }
        }
        // Drain: wait until the subscribers stop receiving.
        Thread.sleep(forTimeInterval: 0.6)
        stop.set()
        finished.wait()
        return (counts.totalRate(), max(0, sent * subscribers - counts.totalReceived()))
    }

    /// REQ -> ROUTER/DEALER proxy -> REP: one request at a time; latencies in microseconds.
    public static func reqrepLatency(size: Int, seconds: Double, port: Int) throws -> [Double] {
        let proxyContext = ZMQContext(ioThreads: 1)
        defer { proxyContext.terminate() }
        let workerContext = ZMQContext(ioThreads: 1)
        defer { workerContext.terminate() }
        let context = ZMQContext(ioThreads: 1)
        defer { context.terminate() }
        let proxy = try Proxy(context: proxyContext, frontendType: .router, backendType: .dealer, port: port)
        defer { proxy.stop() }
        let worker = try echoWorker(context: workerContext, endpoint: proxy.backend)
        defer { worker.stop() }
        let req = try ZMQSocket(context, .req, tuning: .client)
        defer { req.close() }
        try req.set(ZMQ_RCVTIMEO, 2000)
        try req.connect(proxy.frontend)
        let payload = [UInt8](repeating: 0x61, count: size)
        var latencies: [Double] = []
        let end = WallClock.nanos() + UInt64(seconds * 1e9)
        while WallClock.nanos() < end {
            let t0 = WallClock.nanos()
            try req.send([payload], dontWait: false)
            guard try req.receive(dontWait: false) != nil else { break }
            latencies.append(Double(WallClock.nanos() - t0) / 1000)
        }
        return latencies
    }

    /// The frames a `BusClient.call` of method `echo` on service `benchsvc` with a `size`-byte
    /// payload puts after the empty delimiter: `[MDPC01][benchsvc][one-frame body]`, the body
    /// carrying the same binary meta (id, timeout, caller) as the bus's caller sends. Used to run
    /// the raw forwarder with the bus's 7/MDP frame shape: what libzmq alone does with them.
    /// `scripts/instructions-per-request` builds the same bytes for its C side: change both
    /// together.
    public static func mdpShapedRequest(size: Int) -> Frames {
        let meta = RequestMeta(id: "1000000", timeoutMs: 10_000, caller: "benchcaller")
        let body = RequestBody(method: "echo", meta: meta, payload: [UInt8](repeating: 0x61, count: size))
        return [MDP.client, Array("benchsvc".utf8)] + body.encode(oneFrame: true, binaryMeta: true)
    }

    /// DEALER with `inFlight` requests outstanding -> proxy -> REP. Requests per second. Each
    /// request is `[""]` then `request` (the REP echoes it), by default one `size`-byte frame.
    public static func reqrepThroughput(size: Int, inFlight: Int, seconds: Double, port: Int, request: Frames? = nil) throws -> Double {
        let proxyContext = ZMQContext(ioThreads: 1)
        defer { proxyContext.terminate() }
        let workerContext = ZMQContext(ioThreads: 1)
        defer { workerContext.terminate() }
        let context = ZMQContext(ioThreads: 1)
        defer { context.terminate() }
        let proxy = try Proxy(context: proxyContext, frontendType: .router, backendType: .dealer, port: port)
        defer { proxy.stop() }
        let worker = try echoWorker(context: workerContext, endpoint: proxy.backend)
        defer { worker.stop() }
        let dealer = try ZMQSocket(context, .dealer, tuning: .client)
        defer { dealer.close() }
        try dealer.set(ZMQ_RCVTIMEO, 2000)
        try dealer.connect(proxy.frontend)
        let message = [[]] + (request ?? [[UInt8](repeating: 0x61, count: size)])
        for _ in 0..<inFlight { try dealer.send(message, dontWait: false) }
        var done = 0
        let start = WallClock.nanos()
        let end = start + UInt64(seconds * 1e9)
        while WallClock.nanos() < end {
            guard try dealer.receive(dontWait: false) != nil else { break }
            done += 1
            try dealer.send(message, dontWait: false)
        }
        return Double(done) / (Double(WallClock.nanos() - start) / 1e9)
    }

    final class Worker: @unchecked Sendable {
        // @unchecked: the flag is atomic; the socket lives on the worker thread.
        let stopFlag = Flag()
        let done = DispatchSemaphore(value: 0)
        func stop() {
            stopFlag.set()
            done.wait()
        }
    }

    static func echoWorker(context: ZMQContext, endpoint: String) throws -> Worker {
        let worker = Worker()
        let rep = try ZMQSocket(context, .rep, tuning: .default)
        try rep.set(ZMQ_RCVTIMEO, 100)
        try rep.connect(endpoint)
        let box = UncheckedBox(rep)
        Thread.detachNewThread {
            let rep = box.value
            while !worker.stopFlag.isSet {
                guard let frames = try? rep.receive(dontWait: false) else { continue }
                _ = try? rep.send(frames, dontWait: false)
            }
            rep.close()
            worker.done.signal()
        }
        return worker
    }
}

/// Moves a non-Sendable value to the one thread that will own it.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

final class Flag: Sendable {
    private let value = Locked(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

final class Counters: Sendable {
    private let entries: Locked<[(received: Int, first: UInt64, last: UInt64)]>
    /// Which subscribers received a readiness probe.
    private let probes: Locked<[Bool]>
    init(_ n: Int) {
        entries = Locked(Array(repeating: (0, 0, 0), count: n))
        probes = Locked(Array(repeating: false, count: n))
    }
    /// Subscriber `i` received a readiness probe.
    func probed(_ i: Int) { probes.withLock { $0[i] = true } }
    var allProbed: Bool { probes.withLock { !$0.contains(false) } }
    func set(_ i: Int, received: Int, first: UInt64, last: UInt64) { entries.withLock { $0[i] = (received, first, last) } }
    func totalReceived() -> Int { entries.withLock { $0.reduce(0) { $0 + $1.received } } }
    /// Messages/s delivered in total: the sum of each subscriber's own rate.
    func totalRate() -> Double {
        entries.withLock { list in
            list.reduce(0) { total, e in
                guard e.last > e.first else { return total }
                return total + Double(e.received) / (Double(e.last - e.first) / 1e9)
            }
        }
    }
}

extension WallClock {
    /// Monotonic nanoseconds.
    public static func nanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
