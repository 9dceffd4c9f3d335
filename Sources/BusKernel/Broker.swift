import BusSupport
import BusWire
import BusZMQ
import Foundation

/// The kernel's request plane: a Majordomo (7/MDP) broker with 8/MMI, fed messages and clock
/// ticks, returning what to send. No sockets, no clock of its own, so routing, load balancing,
/// deadlines and heartbeat expiry are tested without either.
///
/// Its worker and service records are classes, changed in place: as structs in dictionaries,
/// every look-up copied a record (a retain per field) and every append to a worker's in-flight
/// list while a copy was alive copied the whole list (up to `credit` requests, each retained).
/// A `Broker` is therefore not copied: the kernel loop owns one, each test makes its own.
public struct Broker {
    /// What the shell around the broker must do.
    public enum Action: Equatable {
        /// Send these frames on the ROUTER (the first frame is the peer's routing id).
        case send(Frames)
        /// Send a 7/MDP REQUEST to a worker, ``MDP/request(to:client:body:)``: the shell writes
        /// it frame by frame, without a list.
        case request(worker: [UInt8], client: [UInt8], body: MessageBody)
        /// Send a reply to a client, ``MDP/clientReply(to:serviceFrame:body:)``: the shell
        /// writes it frame by frame, without a list.
        case reply(client: [UInt8], serviceFrame: [UInt8], body: MessageBody)
        /// Publish a kernel event.
        case publish(topic: String, payload: [UInt8])
        /// A request for the kernel's own service (`bus`): answer it with ``clientReply``.
        case kernelRequest(client: [UInt8], body: Frames)
        /// A message that broke the protocol: count it and log it (rate-limited).
        case rejected(reason: String)

        /// The ROUTER message of a sending action as one list; nil for the others.
        public var frames: Frames? {
            switch self {
            case .send(let frames): frames
            case .request(let worker, let client, let body): MDP.request(to: worker, client: client, body: body.frames)
            case .reply(let client, let serviceFrame, let body): MDP.clientReply(to: client, serviceFrame: serviceFrame, body: body.frames)
            case .publish, .kernelRequest, .rejected: nil
            }
        }
    }

    public struct Config: Sendable {
        /// MDP heartbeat interval; a worker is gone after `liveness` silent intervals.
        public var heartbeatInterval: Duration = .milliseconds(1000)
        public var liveness: Int = 3
        /// How long a request without its own deadline waits for a worker.
        public var defaultGrace: Duration = .seconds(5)
        /// Longest any request waits in the kernel, whatever deadline it asks for.
        public var maxWait: Duration = .seconds(60)
        /// Requests queued per service before new ones get 503 at once.
        public var maxQueuedPerService: Int = 10_000
        public init() {}
    }

    /// The config's intervals in nanoseconds, converted once: the broker adds them to a
    /// ``MonotonicTime`` per request and per heartbeat.
    private struct Intervals {
        let heartbeat: Int64
        let expiry: Int64
        let defaultGrace: Int64
        let maxWait: Int64

        init(_ config: Config) {
            heartbeat = config.heartbeatInterval.nanosecondsClamped
            expiry = config.heartbeatInterval.nanosecondsClamped(times: config.liveness)
            defaultGrace = config.defaultGrace.nanosecondsClamped
            maxWait = config.maxWait.nanosecondsClamped
        }
    }

    struct Pending {
        var client: [UInt8]
        var body: MessageBody
        var received: MonotonicTime
        var deadline: MonotonicTime
    }

    struct InFlight {
        var client: [UInt8]
        var body: MessageBody
        var dispatched: MonotonicTime
    }

    // The broker's records (`Worker`, `Service`) are classes shared between its tables, used by
    // the kernel's one thread. No access to one of their fields is open while code that touches
    // the same field runs: none is passed `inout`, and the closures of the mutating calls on
    // them (`removeAll(where:)`) read other things. So the run-time exclusivity checks of the
    // fields requests read and change (about a dozen accesses per request, 1.3 k of the kernel
    // thread's instructions per request) can never fire, and they are turned off.
    final class Worker {
        let identity: [UInt8]
        let service: String
        /// `service` as the frame of the replies routed from this worker, made once.
        let serviceFrame: [UInt8]
        /// The record of `service`: kept while it has workers, so a reply needs no look-up.
        let record: Service
        let info: WorkerInfo
        /// `info.effectiveCredit`, read on every dispatch.
        let credit: Int
        /// `info.oneFrame`: requests in the one-frame form reach it as they are.
        let readsOneFrame: Bool
        /// `info.binaryMeta` (with `readsOneFrame`): binary request meta reaches it as it is.
        let readsBinaryMeta: Bool
        @exclusivity(unchecked) var expiry: MonotonicTime
        /// Requests sent to the worker and not answered yet, oldest first. At most `credit`.
        @exclusivity(unchecked) var inFlight: [InFlight] = []
        @exclusivity(unchecked) var draining = false
        let registered: MonotonicTime
        @exclusivity(unchecked) var lastSeen: MonotonicTime
        @exclusivity(unchecked) var handled = 0
        @exclusivity(unchecked) var failed = 0

        init(identity: [UInt8], service: String, record: Service, info: WorkerInfo, expiry: MonotonicTime, now: MonotonicTime) {
            self.identity = identity
            self.service = service
            self.serviceFrame = Array(service.utf8)
            self.record = record
            self.info = info
            self.credit = info.effectiveCredit
            self.readsOneFrame = info.oneFrame == true
            self.readsBinaryMeta = readsOneFrame && info.binaryMeta == true
            self.expiry = expiry
            self.registered = now
            self.lastSeen = now
        }
    }

    final class Service {
        /// Workers with room for a request, in the order they get the next one. A worker leaves
        /// it when it is removed or starts draining, and is put back only while registered.
        @exclusivity(unchecked) var waiting: [Worker] = []
        @exclusivity(unchecked) var queue: [Pending] = []
        @exclusivity(unchecked) var stats = ServiceStats()
    }

    public let config: Config
    private let intervals: Intervals
    private(set) var workers: [[UInt8]: Worker] = [:]
    private(set) var services: [String: Service] = [:]
    /// The worker and the service looked up last (a run of replies from one worker, of
    /// requests to one service, needs no hashing of the identity or the name). Cleared when
    /// that worker or service is removed.
    private var lastWorker: Worker?
    private var lastService: (name: String, record: Service)?
    private var nextHeartbeat: MonotonicTime?

    public init(config: Config = Config()) {
        self.config = config
        self.intervals = Intervals(config)
    }

    /// The kernel's own service name.
    public static let kernelService = KernelContract.serviceName

    // MARK: input

    /// Handles one message from the ROUTER.
    public mutating func receive(_ frames: Frames, now: MonotonicTime) -> [Action] {
        var actions: [Action] = []
        receive(frames, now: now, into: &actions)
        return actions
    }

    /// Handles one message from the ROUTER, appending what to do to `actions` (a shell reuses
    /// one list for a batch). Given the only reference to `frames`, the body is cut from it
    /// in place.
    public mutating func receive(_ frames: consuming Frames, now: MonotonicTime, into actions: inout [Action]) {
        let shape: MDP.Shape
        do {
            shape = try MDP.shape(frames)
        } catch {
            actions.append(.rejected(reason: error.description))
            // A client that speaks MDPC01 but broke the rest gets an answer, not silence.
            if frames.count >= 3, frames[1].isEmpty, frames[2] == MDP.client, let id = frames.first {
                let reply = ReplyBody.error(400, code: "malformed", message: error.description, id: nil, from: "kernel")
                actions.append(Self.errorReply(reply, to: id, serviceFrame: [], answering: Array(frames.dropFirst(4))))
            }
            return
        }
        switch MDP.inbound(consume frames, shape) {
        case .clientRequest(let client, let service, let body):
            clientRequest(client: client, service: service, body: .frames(body), now: now, into: &actions)
        case .ready(let sender, let service, let metadata):
            ready(sender: sender, service: service, metadata: metadata, now: now, into: &actions)
        case .reply(let sender, let client, let body):
            reply(sender: sender, client: client, body: .frames(body), now: now, into: &actions)
        case .heartbeat(let sender):
            guard let worker = worker(sender) else {
                actions.append(.send(MDP.command(to: sender, .disconnect)))
                return
            }
            worker.expiry = now.advanced(by: intervals.expiry)
            worker.lastSeen = now
        case .disconnect(let sender):
            disconnect(sender: sender, now: now, into: &actions)
        }
    }

    /// ``receive(_:now:into:)`` for a message whose last frame, `last`, is still in the message
    /// libzmq received it in (`frames` holds the frames before it;
    /// ``ZMQSocket/receive(dontWait:property:lastAsMessage:)``): the one-frame body of a client
    /// request or of a worker's reply is routed in it, and sent on without a copy. Any other
    /// message gets its last frame as an array and is handled as ``receive(_:now:into:)`` does.
    public mutating func receive(_ frames: consuming Frames, last: ZMQMessage?, now: MonotonicTime, into actions: inout [Action]) {
        guard let last else { return receive(frames, now: now, into: &actions) }
        // An empty frame where the last one is, for the checks of the message's shape. No shape
        // reads a client request's or a reply's body; where the empty frame stands for a header
        // (a READY's service name, a short REPLY's delimiter), the shape or the count is not one
        // of the two below, and the message is handled again with its real last frame.
        frames.append([])
        switch try? MDP.shape(frames) {
        case .clientRequest(let service) where frames.count == 5:
            clientRequest(client: frames[0], service: service, body: .message(last), now: now, into: &actions)
        case .reply where frames.count == 7:
            reply(sender: frames[0], client: frames[4], body: .message(last), now: now, into: &actions)
        default:
            frames[frames.count - 1] = last.bytes
            receive(frames, now: now, into: &actions)
        }
    }

    /// Advances the clock: heartbeats due, workers expired, queued requests past deadline.
    public mutating func tick(now: MonotonicTime) -> [Action] {
        var actions: [Action] = []
        tick(now: now, into: &actions)
        return actions
    }

    /// ``tick(now:)`` appending to `actions`.
    public mutating func tick(now: MonotonicTime, into actions: inout [Action]) {
        if nextHeartbeat == nil || now >= nextHeartbeat! {
            for (identity, worker) in workers where !worker.draining {
                actions.append(.send(MDP.command(to: identity, .heartbeat)))
            }
            nextHeartbeat = now.advanced(by: intervals.heartbeat)
        }
        for (identity, worker) in workers where worker.expiry <= now {
            removeWorker(identity, now: now, reason: "heartbeat expired", into: &actions)
        }
        // Queues are scanned only when one of their deadlines is due, and the bound is then
        // made exact again.
        let scanQueues = queuedDeadline.map { $0 <= now } ?? false
        if scanQueues { queuedDeadline = nil }
        for (name, service) in services {
            var expired: [Pending] = []
            if scanQueues {
                service.queue.removeAll { pending in
                    if pending.deadline <= now {
                        expired.append(pending)
                        return true
                    }
                    return false
                }
                for pending in service.queue { noteQueued(deadline: pending.deadline) }
            }
            for pending in expired {
                let hasWorkers = workers.values.contains { $0.service == name && !$0.draining }
                let waited = now.milliseconds(since: pending.received)
                let reply: ReplyBody
                if hasWorkers {
                    reply = .error(
                        504, code: "timeout",
                        message: "no worker of service '\(name)' became free within \(waited) ms",
                        id: RequestBody.peekMeta(pending.body.frames)?.id, from: "kernel")
                } else {
                    reply = .error(
                        503, code: "no_such_service",
                        message: "no worker for service '\(name)' registered within \(waited) ms",
                        id: RequestBody.peekMeta(pending.body.frames)?.id, from: "kernel")
                }
                service.stats.record(status: reply.status, latencyNanos: nil, now: now)
                actions.append(
                    Self.errorReply(reply, to: pending.client, serviceFrame: Array(name.utf8), answering: pending.body.frames))
            }
            if service.queue.isEmpty && service.waiting.isEmpty
                && !workers.values.contains(where: { $0.service == name })
                && service.stats.isIdle(now: now)
            {
                services[name] = nil
                if lastService?.name == name { lastService = nil }
            }
        }
    }

    /// `reply` (an error the broker answers itself) to `client`, in the form of the request whose
    /// body is `request`.
    private static func errorReply(_ reply: ReplyBody, to client: [UInt8], serviceFrame: [UInt8], answering request: Frames) -> Action {
        .reply(client: client, serviceFrame: serviceFrame, body: .frames(reply.encode(answering: request)))
    }

    /// When the shell should call ``tick(now:)`` next.
    ///
    /// `mutating` though it changes nothing: the kernel keeps the broker in a stored property of
    /// its loop (a class), where a non-mutating call copies the whole struct first (a retain and
    /// a release of each of its tables), and its timer asks twice per loop turn. A mutating call
    /// runs on it in place.
    public mutating func nextDeadline(now: MonotonicTime) -> MonotonicTime {
        var next = nextHeartbeat ?? now
        for worker in workers.values where worker.expiry < next { next = worker.expiry }
        if let queuedDeadline, queuedDeadline < next { next = queuedDeadline }
        return next
    }

    /// No queued request's deadline is earlier (a lower bound: a request dispatched since leaves
    /// it early, and ``tick(now:)`` then makes it exact). Scanning every queue here instead cost
    /// the kernel a copy of each waiting request twice per loop turn.
    private var queuedDeadline: MonotonicTime?

    private mutating func noteQueued(deadline: MonotonicTime) {
        if queuedDeadline == nil || deadline < queuedDeadline! { queuedDeadline = deadline }
    }

    // MARK: clients

    /// Who calls which service, for the graph: the caller's name comes from the request meta of
    /// its first request on a connection (informational; identity checks use ZAP).
    var calls: [CallEdge: Int] { callCounters.mapValues(\.count) }
    private var callCounters: [CallEdge: CallCounter] = [:]
    /// Per client connection: its name and the counter of the edge it used last (a client
    /// usually calls the same service again: no edge hashed per request then).
    private var callers: [[UInt8]: Caller] = [:]
    /// The connection that called last and its record (a run of requests from one connection
    /// hashes its identity once).
    private var lastCaller: (client: [UInt8], record: Caller)?

    final class CallCounter {
        var count = 0
    }

    final class Caller {
        let name: String
        var lastService = ""
        var lastCounter: CallCounter?
        init(name: String) { self.name = name }
    }

    /// `caller` is asked only for a client connection not seen before.
    private mutating func noteCall(client: [UInt8], caller: () -> String?, service: String) {
        let record: Caller
        if let last = lastCaller, last.client == client {
            record = last.record
        } else if let known = callers[client] {
            record = known
        } else {
            record = Caller(name: caller() ?? "client-\(WorkerInfo.hex(client))")
            if callers.count > 10_000 { callers.removeAll() }
            callers[client] = record
        }
        lastCaller = (client, record)
        if let counter = record.lastCounter, record.lastService == service {
            counter.count += 1
            return
        }
        let edge = CallEdge(caller: record.name, service: service)
        var counter = callCounters[edge]
        if counter == nil, callCounters.count < 10_000 {
            counter = CallCounter()
            callCounters[edge] = counter
        }
        counter?.count += 1
        record.lastService = service
        record.lastCounter = counter
    }

    private mutating func clientRequest(client: [UInt8], service: String, body: MessageBody, now: MonotonicTime, into actions: inout [Action]) {
        if service == Self.kernelService {
            actions.append(.kernelRequest(client: client, body: body.frames))
            return
        }
        if service.hasPrefix("mmi.") {
            actions.append(.reply(client: client, serviceFrame: Array(service.utf8), body: .frames([mmi(service: service, body: body.frames)])))
            return
        }
        // The request meta (JSON) is read only when needed: for a caller's first request (its
        // name, for the graph) and for a request that has to wait (its deadline).
        var meta: RequestMeta??
        func readMeta() -> RequestMeta? {
            if meta == nil { meta = .some(RequestBody.peekMeta(body.frames)) }
            return meta!
        }
        if let problem = body.binaryMetaProblem {
            let reply = ReplyBody.error(400, code: "malformed", message: problem, id: nil, from: "kernel")
            actions.append(Self.errorReply(reply, to: client, serviceFrame: Array(service.utf8), answering: body.frames))
            return
        }
        noteCall(client: client, caller: { readMeta()?.caller }, service: service)
        let record = self.service(named: service)
        let queued = record.queue.count
        if queued >= config.maxQueuedPerService {
            let reply = ReplyBody.error(
                503, code: "overloaded",
                message: "service '\(service)' has \(queued) requests queued; try later",
                id: readMeta()?.id, from: "kernel")
            record.stats.record(status: 503, latencyNanos: nil, now: now)
            actions.append(Self.errorReply(reply, to: client, serviceFrame: Array(service.utf8), answering: body.frames))
            return
        }
        record.queue.append(Pending(client: client, body: body, received: now, deadline: now.advanced(by: intervals.maxWait)))
        dispatch(record, now: now, into: &actions)
        if let last = record.queue.indices.last, record.queue[last].client == client, record.queue[last].received == now {
            // It waits: until a little before the caller's own timeout (so it gets 503/504, not
            // silence), or the grace period when it gave none.
            var wait = intervals.defaultGrace
            if let ms = meta == nil ? body.timeoutMs : readMeta()?.timeoutMs, ms > 0 {
                let timeout = Duration.milliseconds(ms).nanosecondsClamped
                wait = timeout - min(250_000_000, timeout / 5)
            }
            record.queue[last].deadline = now.advanced(by: min(wait, intervals.maxWait))
            noteQueued(deadline: record.queue[last].deadline)
        }
    }

    /// 8/MMI: `mmi.service` answers 200 when the named service has a worker, else 404;
    /// any other `mmi.*` answers 501.
    private func mmi(service: String, body: Frames) -> [UInt8] {
        guard service == "mmi.service" else { return Array("501".utf8) }
        // The first body frame; from a one-frame body, its method part (a `call("mmi.service", NAME)`).
        let name = RequestBody.peekMethod(body, from: 0)
        if name == Self.kernelService { return Array("200".utf8) }
        let known = workers.values.contains { $0.service == name && !$0.draining }
        return Array((known ? "200" : "404").utf8)
    }

    // MARK: workers

    private mutating func ready(sender: [UInt8], service: String, metadata: [UInt8]?, now: MonotonicTime, into actions: inout [Action]) {
        if workers[sender] != nil {
            // 7/MDP: a READY from a known worker is a protocol error; drop it and disconnect.
            removeWorker(sender, now: now, reason: "sent READY twice", into: &actions)
            actions.append(.send(MDP.command(to: sender, .disconnect)))
            actions.append(.rejected(reason: "worker \(WorkerInfo.hex(sender)) sent READY twice"))
            return
        }
        if service == Self.kernelService || service.hasPrefix("mmi.") {
            actions.append(.send(MDP.command(to: sender, .disconnect)))
            actions.append(.rejected(reason: "a worker tried to register the reserved service '\(service)'"))
            return
        }
        let info = WorkerInfo(identity: sender, metadata: metadata)
        let firstOfInstance = !workers.values.contains { $0.service == service && $0.info.instance == info.instance }
        let record = self.service(named: service)
        let worker = Worker(identity: sender, service: service, record: record, info: info, expiry: now.advanced(by: intervals.expiry), now: now)
        workers[sender] = worker
        record.waiting.append(worker)
        if firstOfInstance {
            actions.append(.publish(topic: "bus.service.up", payload: serviceEvent(service, info, reason: "ready")))
        }
        dispatch(record, now: now, into: &actions)
    }

    private mutating func reply(sender: [UInt8], client: [UInt8], body: MessageBody, now: MonotonicTime, into actions: inout [Action]) {
        guard let worker = worker(sender) else {
            actions.append(.send(MDP.command(to: sender, .disconnect)))
            actions.append(.rejected(reason: "REPLY from unknown worker \(WorkerInfo.hex(sender))"))
            return
        }
        // A worker answers its requests in the order it got them (7/MDP: one at a time; with
        // credit, in order). Only a client whose request the worker holds may be answered: no
        // spoofed or duplicate replies reach anyone.
        guard let index = worker.inFlight.firstIndex(where: { $0.client == client }) else {
            actions.append(.rejected(reason: "worker \(worker.info.instance) of '\(worker.service)' sent a REPLY for a request it does not hold"))
            return
        }
        let inFlight = worker.inFlight.remove(at: index)
        let wasFull = worker.inFlight.count + 1 >= worker.credit
        let status = body.replyStatus
        worker.handled += 1
        if let status, status >= 500 { worker.failed += 1 }
        worker.expiry = now.advanced(by: intervals.expiry)
        worker.lastSeen = now
        let record = worker.record
        record.stats.record(status: status ?? 200, latencyNanos: now.nanoseconds(since: inFlight.dispatched), now: now)
        actions.append(.reply(client: client, serviceFrame: worker.serviceFrame, body: body))
        if worker.draining {
            if worker.inFlight.isEmpty {
                removeWorker(sender, now: now, reason: "drained", into: &actions)
                actions.append(.send(MDP.command(to: sender, .disconnect)))
            }
        } else {
            if wasFull { record.waiting.append(worker) }
            dispatch(record, now: now, into: &actions)
        }
    }

    private mutating func disconnect(sender: [UInt8], now: MonotonicTime, into actions: inout [Action]) {
        guard let worker = workers[sender] else { return }
        if !worker.inFlight.isEmpty {
            // Let it finish: it stops getting work now and leaves once its replies are routed.
            worker.draining = true
            worker.record.waiting.removeAll { $0 === worker }
            return
        }
        // Acknowledge with DISCONNECT: everything this worker was sent is now before that
        // ack on its connection, so a draining worker that sees it has nothing more to do.
        removeWorker(sender, now: now, reason: "disconnected", into: &actions)
        actions.append(.send(MDP.command(to: sender, .disconnect)))
    }

    /// Drops a worker at once (its key was revoked): its caller, if any, gets 503 worker_lost.
    public mutating func evict(worker identity: [UInt8], now: MonotonicTime, reason: String) -> [Action] {
        var actions: [Action] = []
        removeWorker(identity, now: now, reason: reason, into: &actions)
        actions.append(.send(MDP.command(to: identity, .disconnect)))
        return actions
    }

    private mutating func removeWorker(_ identity: [UInt8], now: MonotonicTime, reason: String, into actions: inout [Action]) {
        guard let worker = workers.removeValue(forKey: identity) else { return }
        if lastWorker === worker { lastWorker = nil }
        worker.record.waiting.removeAll { $0 === worker }
        for inFlight in worker.inFlight {
            let reply = ReplyBody.error(
                503, code: "worker_lost",
                message: "the worker of '\(worker.service)' handling this request went away (\(reason))",
                id: RequestBody.peekMeta(inFlight.body.frames)?.id, from: "kernel")
            worker.record.stats.record(status: 503, latencyNanos: now.nanoseconds(since: inFlight.dispatched), now: now)
            actions.append(
                Self.errorReply(reply, to: inFlight.client, serviceFrame: worker.serviceFrame, answering: inFlight.body.frames))
        }
        let lastOfInstance = !workers.values.contains { $0.service == worker.service && $0.info.instance == worker.info.instance }
        if lastOfInstance {
            actions.append(.publish(topic: "bus.service.down", payload: serviceEvent(worker.service, worker.info, reason: reason)))
        }
    }

    /// The service's record, made when it is first named.
    private mutating func service(named name: String) -> Service {
        if let last = lastService, last.name == name { return last.record }
        let record: Service
        if let known = services[name] {
            record = known
        } else {
            record = Service()
            services[name] = record
        }
        lastService = (name, record)
        return record
    }

    /// The registered worker with this identity.
    private mutating func worker(_ identity: [UInt8]) -> Worker? {
        if let last = lastWorker, last.identity == identity { return last }
        lastWorker = workers[identity]
        return lastWorker
    }

    private func dispatch(_ service: Service, now: MonotonicTime, into actions: inout [Action]) {
        while !service.waiting.isEmpty && !service.queue.isEmpty {
            // The least loaded worker with room; the longest waiting among equals (LRU).
            var best = 0
            var bestLoad = Int.max
            for (index, candidate) in service.waiting.enumerated() {
                let load = candidate.inFlight.count
                if load < bestLoad {
                    best = index
                    bestLoad = load
                    if load == 0 { break }
                }
            }
            let worker = service.waiting.remove(at: best)
            guard !worker.draining, worker.inFlight.count < worker.credit else { continue }
            let identity = worker.identity
            let pending = service.queue.removeFirst()
            worker.inFlight.append(InFlight(client: pending.client, body: pending.body, dispatched: now))
            // A worker that did not say it reads binary meta gets JSON meta; one that did not say
            // it reads one-frame bodies gets the three frames (a body in a message read as frames
            // once, for either).
            var body = pending.body
            if !worker.readsBinaryMeta || !worker.readsOneFrame {
                var frames = body.frames
                var changed = false
                if !worker.readsBinaryMeta, let converted = RequestBody.withJSONMeta(frames) {
                    frames = converted
                    changed = true
                }
                if !worker.readsOneFrame, let three = RequestBody.threeFrames(frames) {
                    frames = three
                    changed = true
                }
                if changed { body = .frames(frames) }
            }
            actions.append(.request(worker: identity, client: pending.client, body: body))
            // Still room: back to the end of the line (round robin across workers).
            if worker.inFlight.count < worker.credit { service.waiting.append(worker) }
        }
    }

    private func serviceEvent(_ service: String, _ info: WorkerInfo, reason: String) -> [UInt8] {
        let remaining = workers.values.filter { $0.service == service && !$0.draining }.count
        let event = ServiceEvent(
            service: service, instance: info.instance, version: info.version, host: info.host, pid: info.pid,
            workers: remaining, reason: reason)
        return (try? JSONEncoder.bus.encode(event)).map(Array.init) ?? []
    }
}

/// A caller -> service edge of the call graph.
public struct CallEdge: Hashable, Sendable {
    public var caller: String
    public var service: String
}

/// The payload of `bus.service.up` and `bus.service.down`.
public struct ServiceEvent: Codable, Equatable, Sendable {
    public var service: String
    public var instance: String
    public var version: String?
    public var host: String?
    public var pid: Int?
    /// Workers of the service still registered after this change.
    public var workers: Int
    public var reason: String
}
