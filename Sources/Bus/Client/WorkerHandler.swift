import BusSupport
import BusWire
import BusZMQ
import Foundation

/// A request handed from a worker socket to the service runtime.
struct WorkerRequest: Sendable {
    let worker: ObjectIdentifier
    let client: [UInt8]
    /// The whole message as received; the request body starts at `bodyStart` (not copied out).
    let frames: Frames
    let bodyStart: Int
    let received: MonotonicTime
    /// Decoded already, with its handler found (by an `answerNow` that could not answer it).
    var prepared: BusService.Prepared?
}

/// What a service makes of a request read in place: its reply, or the decoded request for a
/// handler that suspends.
enum InPlaceAnswer {
    case reply(ReplyEncoding)
    case later(BusService.Prepared)
}

/// One MDP worker connection (`MDPW01`) to the kernel: READY with the instance's metadata,
/// heartbeats both ways, reconnect when the kernel goes silent, and a drain that sends
/// DISCONNECT and waits for the kernel's DISCONNECT back before closing.
final class WorkerHandler: IOHandler {
    enum Phase { case serving, draining, drained }

    private(set) var socket: ZMQSocket
    let service: String
    let metadata: [UInt8]
    /// The heartbeat interval and the silence after which the kernel counts as gone
    /// (heartbeat × liveness), in nanoseconds: converted once, the silence deadline moves on
    /// every message from the kernel.
    private let heartbeatNanos: Int64
    private let silenceNanos: Int64
    /// Consecutive times the kernel stayed silent for a whole silence window: each doubles the
    /// next window (up to ``maxSilenceNanos``), so a kernel that is down for long does not
    /// make the worker open a new socket (whose connecting starts libzmq's back-off over)
    /// every few seconds. Any message from the kernel resets it. A socket that is not
    /// connected keeps trying on its own meanwhile, and its READY waits in its queue.
    private var silentWindows = 0
    static let maxSilenceNanos: Int64 = 60_000_000_000
    let sink: @Sendable (WorkerRequest) -> Void
    /// For a service whose handlers run on this thread: the reply to a request, made at once
    /// when its handler never suspends; nil leaves the request to `sink` (perhaps prepared).
    /// Asked only while no earlier request of this connection is unanswered, so replies keep
    /// their order.
    let answerNow: (@Sendable (inout WorkerRequest) -> ReplyEncoding?)?
    /// With `answerNow`: the same for a request in the one-frame form, decoded where it was
    /// received (the `UInt64?`: the id of its binary meta, nil for JSON meta; the reply's meta
    /// takes the same form).
    let answerInPlace: (@Sendable (RequestBody, UInt64?, MonotonicTime) -> InPlaceAnswer)?
    /// The method and caller of the last request read in place.
    private var texts = RequestBody.Texts()
    /// Messages are received into these; a one-frame request is read in place.
    private let parts: ZMQParts
    private var kernelDeadline: MonotonicTime
    private var nextHeartbeat: MonotonicTime
    private(set) var phase = Phase.serving
    private var onDrained: (@Sendable () -> Void)?
    private var inFlight = 0
    private(set) var reconnects = 0
    /// False while READY could not be queued: a socket towards a host name has no pipe until the
    /// name resolved (``IOLoop/connect(_:to:tuning:)``). Every tick tries again until it is.
    private var readySent = false

    init(
        loop: IOLoop, service: String, metadata: [UInt8], heartbeat: Duration, liveness: Int,
        answerNow: (@Sendable (inout WorkerRequest) -> ReplyEncoding?)? = nil,
        answerInPlace: (@Sendable (RequestBody, UInt64?, MonotonicTime) -> InPlaceAnswer)? = nil,
        sink: @escaping @Sendable (WorkerRequest) -> Void
    ) throws(ZMQError) {
        self.service = service
        self.metadata = metadata
        heartbeatNanos = heartbeat.nanosecondsClamped
        silenceNanos = heartbeat.nanosecondsClamped(times: liveness)
        self.sink = sink
        self.answerNow = answerNow
        self.answerInPlace = answerInPlace
        let now = MonotonicTime.now
        kernelDeadline = now.advanced(by: silenceNanos)
        nextHeartbeat = now.advanced(by: heartbeatNanos)
        socket = try Self.open(loop)
        // `[""][MDPW01][command][client][""]` and three body frames, and one slot for the rest.
        parts = ZMQParts(capacity: 9)
        do {
            readySent = try socket.send(MDP.workerReady(service: service, metadata: metadata), dontWait: true)
        } catch {
            loop.release(socket)
            socket.close()
            parts.close()
            throw error
        }
        watchMoves(loop)
    }

    /// A READY still queued for the kernel's old address is gone when the socket moves to its
    /// new one (``IOLoop/whenMoved(_:_:)``): it is sent again.
    private func watchMoves(_ loop: IOLoop) {
        loop.whenMoved(socket) { [unowned self] in readySent = false }
    }

    private static func open(_ loop: IOLoop) throws(ZMQError) -> ZMQSocket {
        // Not IMMEDIATE: READY waits in the queue until the connection is up.
        try loop.connect(.dealer, to: loop.endpoints.requests, tuning: .default)
    }

    func readable(_ loop: IOLoop) {
        for _ in 0..<256 {
            guard let count = (try? parts.receive(socket)) ?? nil else { return }
            let now = MonotonicTime.now
            kernelDeadline = now.advanced(by: silenceNanos)
            silentWindows = 0
            // `[""][MDPW01][REQUEST][client][""][one-frame body]`, answered at once: read where
            // libzmq received it.
            if count == 6, inFlight == 0, let answerInPlace, parts.size(0) == 0, parts.size(4) == 0,
                MDP.worker.hasSameBytes(as: parts.bytes(1)), parts.size(2) == 1, parts.bytes(2)[0] == MDP.Command.request.rawValue,
                let (body, binaryID) = RequestBody.decodeOneFrame(parts.bytes(5), texts: &texts)
            {
                let client = socket.frame(parts.bytes(3), at: 3)
                switch answerInPlace(body, binaryID, now) {
                case .reply(let reply):
                    send(loop, client: client, body: reply)
                case .later(let prepared):
                    var request = WorkerRequest(worker: ObjectIdentifier(self), client: client, frames: frames(count), bodyStart: 5, received: now)
                    request.prepared = prepared
                    inFlight += 1
                    sink(request)
                }
                continue
            }
            // Past the last slot the frames overwrite each other in it: the slots before it hold
            // the header and the three body frames a request is read from (the rest is ignored,
            // as the decoder ignores it).
            let frames = frames(count <= parts.capacity ? count : parts.capacity - 1)
            guard frames.count >= 3, frames[0].isEmpty, frames[1] == MDP.worker, frames[2].count == 1,
                let command = MDP.Command(rawValue: frames[2][0])
            else {
                loop.logger.warning("worker of \(service) dropped a message that is not MDPW01")
                continue
            }
            switch command {
            case .request:
                guard frames.count >= 5, frames[4].isEmpty else {
                    loop.logger.warning("worker of \(service) dropped a REQUEST without [client][empty]")
                    continue
                }
                var request = WorkerRequest(worker: ObjectIdentifier(self), client: frames[3], frames: frames, bodyStart: 5, received: now)
                if inFlight == 0, let answerNow, let body = answerNow(&request) {
                    send(loop, client: request.client, body: body)
                    continue
                }
                inFlight += 1
                sink(request)
            case .heartbeat:
                break
            case .disconnect:
                switch phase {
                case .draining:
                    finishDrainIfIdle(loop, acknowledged: true)
                case .drained:
                    // A second DISCONNECT (the kernel answers a heartbeat sent while draining
                    // from a worker it already removed): reconnecting would register a worker
                    // for a process about to exit, and the kernel would route requests to it.
                    break
                case .serving:
                    loop.logger.notice("kernel asked the worker of \(service) to reconnect")
                    reconnect(loop)
                }
            case .ready, .reply:
                loop.logger.warning("worker of \(service) got an unexpected \(command) command")
            }
        }
    }

    /// The message in `parts` as frames (small repeated frames shared, as the socket's own
    /// receive does).
    private func frames(_ count: Int) -> Frames {
        (0..<count).map { socket.frame(parts.bytes($0), at: $0) }
    }

    /// Sends the reply for a request this worker received.
    func reply(_ loop: IOLoop, client: [UInt8], body: ReplyEncoding) {
        inFlight = max(0, inFlight - 1)
        send(loop, client: client, body: body)
    }

    private func send(_ loop: IOLoop, client: [UInt8], body: ReplyEncoding) {
        do {
            if try !MDP.sendWorkerReply(client: client, body: body, on: socket) {
                loop.logger.error("worker of \(service) could not send a reply: its queue towards the kernel is full")
            }
        } catch {
            loop.logger.error("worker of \(service) could not send a reply", metadata: ["error": error.description])
        }
        if phase == .draining { finishDrainIfIdle(loop, acknowledged: false) }
    }

    /// Tells the kernel this worker leaves (DISCONNECT) and calls `done` once the kernel has
    /// acknowledged and every request it was given has been answered.
    func drain(_ loop: IOLoop, done: @escaping @Sendable () -> Void) {
        guard phase == .serving else {
            done()
            return
        }
        phase = .draining
        onDrained = done
        _ = try? socket.send(MDP.workerCommand(.disconnect))
        acknowledged = false
    }

    private var acknowledged = false

    private func finishDrainIfIdle(_ loop: IOLoop, acknowledged ack: Bool) {
        if ack { acknowledged = true }
        guard acknowledged, inFlight == 0, phase == .draining else { return }
        phase = .drained
        onDrained?()
        onDrained = nil
    }

    private func reconnect(_ loop: IOLoop) {
        kernelDeadline = MonotonicTime.now.advanced(by: silenceWindow)
        // The new socket first: when it cannot be opened (out of descriptors), the old one stays
        // in use, never a closed one, and the next silent window tries again.
        let fresh: ZMQSocket
        do {
            fresh = try Self.open(loop)
        } catch {
            loop.logger.error("worker of \(service) could not reconnect", metadata: ["error": error.description])
            return
        }
        loop.release(socket)
        socket.close()
        socket = fresh
        reconnects += 1
        inFlight = 0
        readySent = false
        sendReady(loop)
        watchMoves(loop)
        loop.socketsChanged()
    }

    private func sendReady(_ loop: IOLoop) {
        do {
            readySent = try socket.send(MDP.workerReady(service: service, metadata: metadata), dontWait: true)
        } catch {
            // Not tried on every tick: the next silent window opens a new socket.
            readySent = true
            loop.logger.error("worker of \(service) could not send READY", metadata: ["error": error.description])
        }
    }

    func tick(_ loop: IOLoop, now: MonotonicTime) -> MonotonicTime? {
        guard phase != .drained else { return nil }
        if !readySent, phase == .serving { sendReady(loop) }
        if now >= kernelDeadline {
            if phase == .draining {
                // The kernel is gone; nobody is left to acknowledge.
                finishDrainIfIdle(loop, acknowledged: true)
                return nil
            }
            loop.logger.warning("kernel silent for \(Duration.nanoseconds(silenceWindow)); worker of \(service) reconnects")
            silentWindows += 1
            reconnect(loop)
        }
        if now >= nextHeartbeat {
            _ = try? socket.send(MDP.workerCommand(.heartbeat))
            nextHeartbeat = now.advanced(by: heartbeatNanos)
        }
        return min(nextHeartbeat, kernelDeadline)
    }

    /// The silence after which the worker opens a new socket: the heartbeat × liveness,
    /// doubled for each window the kernel already stayed silent.
    private var silenceWindow: Int64 {
        min(Self.maxSilenceNanos, silenceNanos << Int64(min(silentWindows, 16)))
    }

    func close(_ loop: IOLoop) {
        if phase == .serving { _ = try? socket.send(MDP.workerCommand(.disconnect)) }
        onDrained?()
        onDrained = nil
        loop.release(socket)
        socket.close()
        parts.close()
    }
}
