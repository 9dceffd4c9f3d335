import BusSupport
import BusWire
import BusZMQ
import CZeroMQ
import Foundation
import Synchronization

/// The microkernel: a Majordomo broker on a ROUTER and an XSUB/XPUB event forwarder, served by
/// one dedicated thread that owns every socket. Nothing here runs on Swift's cooperative pool.
public final class Kernel: Sendable {
    public let config: KernelConfig
    let logger: Logger
    private let wake = WakeUp()
    private let stopping = Atomic<Bool>(false)
    private let context = ZMQContext(ioThreads: 1)

    public init(config: KernelConfig, logger: Logger = Logger(label: "kernel")) {
        self.config = config
        self.logger = logger
    }

    /// Binds the three endpoints and serves on the calling thread until ``stop()``.
    ///
    /// - Parameter onReady: called once every endpoint is bound.
    /// - Throws: ``ZMQError`` when an endpoint cannot be bound (address in use, bad endpoint);
    ///   ``SecurityError`` when security is on and cannot be enforced (fails closed).
    public func run(onReady: @Sendable () -> Void = {}) throws {
        let loop = try KernelLoop(kernel: self, context: context)
        logger.info(
            "kernel listening",
            metadata: [
                "requests": loop.router.endpoint, "events.in": loop.xsub.endpoint, "events.out": loop.xpub.endpoint,
                "libzmq": ZMQContext.version,
                "security": config.security == nil ? "off" : "curve+zap (\(loop.guardian?.authorized.count ?? 0) keys)",
            ])
        onReady()
        loop.serve(wake: wake, stopping: stopping)
        loop.close()
        context.terminate()
        wake.close()
        logger.info("kernel stopped")
    }

    /// Asks the serving thread to stop; safe from any thread and from signal-handling code.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
    }

    /// Runs the kernel on its own thread and returns once it is bound, or throws why it could
    /// not bind. `onExit` runs on that thread after the kernel stopped.
    public func start(onExit: @escaping @Sendable () -> Void = {}) async throws {
        let result: Result<Void, any Error> = await withCheckedContinuation { continuation in
            Thread.startNamed("bus.kernel") { [self] in
                let reported = Atomic<Bool>(false)
                do {
                    try self.run {
                        reported.store(true, ordering: .relaxed)
                        continuation.resume(returning: .success(()))
                    }
                } catch {
                    if !reported.load(ordering: .relaxed) { continuation.resume(returning: .failure(error)) }
                }
                onExit()
            }
        }
        try result.get()
    }
}

/// The state of the serving thread. Not Sendable: created, used and closed on that thread.
final class KernelLoop {
    let kernel: Kernel
    let context: ZMQContext
    let router: ZMQSocket
    var xsub: ZMQSocket
    var xpub: ZMQSocket
    /// Security (CURVE, ZAP, permissions); nil when off.
    let guardian: KernelGuard?
    /// Which identity registered each worker, to evict them when a key is revoked.
    var workerIdentities: [[UInt8]: String] = [:]
    /// The serving loop, while ``serve(wake:stopping:)`` runs.
    var sockets: PollLoop<KernelLoop>?
    var broker: Broker
    var events: EventPlane
    var logLimiter = RateLimitedLog()
    var kernelSeq: [String: UInt64] = [:]
    let instance = "kernel-\(ProcessInfo.processInfo.processIdentifier)"
    let started = MonotonicTime.now
    /// When this kernel process started, wall clock: with its pid, what tells `persist` a new
    /// kernel instance (`bus.ping` `started_us`).
    let startedMicros = WallClock.microsNow()
    var unroutable: UInt64 = 0
    /// The request plane's action list, reused batch after batch (``serveRequests(limit:)``).
    private var requestActions: [Broker.Action] = []
    var rejected: UInt64 = 0
    /// Events are forwarded in place: received into these and sent on without a copy.
    private let parts = ZMQParts(capacity: 4)
    /// The topic of the last event forwarded (a valid one).
    private var lastTopicKey: [UInt8] = []
    /// The counters of `lastTopicKey`, once looked up; nil after anything that may have made or
    /// forgotten counters.
    private var lastCounters: EventPlane.TopicCounters?
    /// An event in `parts` that a full subscriber queue refused, and since when: while one is
    /// held, XSUB is not read, so the wait reaches publishers (see ``KernelConfig/subscriberGrace``).
    private(set) var held: (topic: [UInt8], since: MonotonicTime)?
    /// Until then, an event a full queue refuses is dropped for that queue at once.
    private var lossyUntil = MonotonicTime.now
    /// After a drop, the newest event of each stream, re-sent so a lost stream end shows.
    var catchUp: TailCatchUp
    /// Every subscription is checked here before it is applied.
    var gate: SubscriptionGate

    var logger: Logger { kernel.logger }

    init(kernel: Kernel, context: ZMQContext) throws {
        self.kernel = kernel
        self.context = context
        let config = kernel.config
        broker = Broker(config: config.broker)
        events = EventPlane(maxRetained: config.maxRetainedTopics)
        catchUp = TailCatchUp(limits: .init(window: config.catchUpWindow))
        gate = SubscriptionGate(limits: config.subscriptionLimits)

        var opened: [ZMQSocket] = []
        var guardian: KernelGuard?
        do {
            // With security, the ZAP handler exists (and passed its self-test) before any
            // endpoint is bound: there is no moment when a CURVE endpoint admits anyone.
            if let security = config.security {
                guardian = try KernelGuard(security: security, context: context, logger: kernel.logger)
            }
            let router = try ZMQSocket(context, .router, tuning: config.tuning)
            opened.append(router)
            try router.set(ZMQ_ROUTER_MANDATORY, 1)
            if let security = config.security { try router.makeCurveServer(security.keyPair, domain: KernelGuard.domain) }
            try router.bind(Endpoints.bindable(config.endpoints.requests))

            let xsub = try Self.openXSUB(context: context, config: config)
            opened.append(xsub)

            let xpub = try Self.openXPUB(context: context, config: config)
            opened.append(xpub)
            if let guardian {
                try guardian.monitor(router, context: context, name: "requests")
                try guardian.monitor(xsub, context: context, name: "events-in")
                try guardian.monitor(xpub, context: context, name: "events-out")
            }
            self.router = router
            self.xsub = xsub
            self.xpub = xpub
            self.guardian = guardian
        } catch {
            guardian?.close()
            for socket in opened { socket.close() }
            parts.close()
            throw error
        }
    }

    /// The XSUB publishers connect to; it subscribes to everything: the kernel counts and
    /// retains every topic.
    static func openXSUB(context: ZMQContext, config: KernelConfig) throws(ZMQError) -> ZMQSocket {
        let xsub = try ZMQSocket(context, .xsub, tuning: config.tuning)
        do {
            if let security = config.security { try xsub.makeCurveServer(security.keyPair, domain: KernelGuard.domain) }
            try xsub.bind(Endpoints.bindable(config.endpoints.eventsIn))
            try xsub.send([[1]])
        } catch {
            xsub.close()
            throw error
        }
        return xsub
    }

    /// The XPUB towards subscribers. Manual mode: the kernel applies each subscription itself
    /// after checking it (and then sends the retained values it covers). Its inbound frames
    /// are only subscriptions, so their limit is one prefix's worth
    /// (``SubscriptionGate/maxFrameBytes``): libzmq closes a connection that sends more before
    /// it stores anything of it. Each subscriber's
    /// queue is bounded by `subscriberHighWater`: memory stays bounded under a slow reader.
    /// `XPUB_NODROP`: a send that a full queue cannot take fails with `EAGAIN` instead of being
    /// dropped silently for that queue, so the kernel can wait for room (backpressure) and,
    /// when it gives up, drop for the full queues alone and count it (``lossy(_:)``).
    static func openXPUB(context: ZMQContext, config: KernelConfig) throws(ZMQError) -> ZMQSocket {
        var outTuning = config.tuning
        outTuning.sendHighWater = config.subscriberHighWater
        outTuning.maxMessageSize = min(outTuning.maxMessageSize, SubscriptionGate.maxFrameBytes)
        let xpub = try ZMQSocket(context, .xpub, tuning: outTuning)
        do {
            try xpub.set(ZMQ_XPUB_MANUAL, 1)
            try xpub.set(ZMQ_XPUB_NODROP, 1)
            if let security = config.security { try xpub.makeCurveServer(security.keyPair, domain: KernelGuard.domain) }
            try xpub.bind(Endpoints.bindable(config.endpoints.eventsOut))
        } catch {
            xpub.close()
            throw error
        }
        return xpub
    }

    func close() {
        guardian?.close()
        router.close()
        xsub.close()
        xpub.close()
        parts.close()
    }

    /// Serves until `stopping` is set: every socket is a handler on one ``PollLoop``, the kind
    /// of loop every client's I/O thread runs too (``KernelLoop+Handlers.swift``).
    func serve(wake: WakeUp, stopping: borrowing Atomic<Bool>) {
        let sockets = PollLoop<KernelLoop>(wakeFD: wake.fd, longestWait: .milliseconds(100), logger: logger)
        self.sockets = sockets
        installHandlers()
        while !stopping.load(ordering: .acquiring) {
            guard let woken = sockets.turn(self) else { break }
            if woken { wake.drain() }
        }
        sockets.removeAll()
        self.sockets = nil
        // Stopping: a held event still goes to every subscriber with room.
        if let held {
            dropForFullQueues(topic: held.topic)
            self.held = nil
        }
    }

    // MARK: request plane

    /// Reads up to `limit` messages, then sends everything they caused in one burst: sends
    /// spaced by the processing of the next message each wake libzmq's I/O thread for one
    /// TCP write, a burst lets it write many messages at once.
    func serveRequests(limit: Int) {
        // One list for every batch: taken out of the loop's field while in use (performing an
        // action may serve a kernel request that evicts workers and performs again).
        var actions: [Broker.Action] = []
        swap(&actions, &requestActions)
        defer {
            perform(actions)
            actions.removeAll(keepingCapacity: actions.capacity <= 1024)
            swap(&actions, &requestActions)
        }
        // Without security, a request's or a reply's one-frame body over
        // ``ZMQMessage/sharedBufferLimit`` stays in libzmq's message and is forwarded in it
        // (``Broker/receive(_:last:now:into:)``); with it, the guard's policy reads the called
        // method from the frames (``KernelGuard/checkRequest(_:identity:)``).
        let bodyAsMessage = guardian == nil ? 4 : nil
        for _ in 0..<limit {
            let frames: Frames
            let last: ZMQMessage?
            let userID: String?
            do {
                guard let received = try router.receive(property: guardian == nil ? nil : "User-Id", lastAsMessage: bodyAsMessage) else { return }
                (frames, last, userID) = received
            } catch {
                logger.error("router receive failed", metadata: ["error": error.description])
                return
            }
            if let guardian {
                let identity = guardian.identity(userID: userID)
                if let refusal = guardian.checkRequest(frames, identity: identity) {
                    actions += refusal
                    continue
                }
                if let identity, frames.count >= 4, frames[2] == MDP.worker, frames[3] == [MDP.Command.ready.rawValue] {
                    workerIdentities[frames[0]] = identity
                }
            }
            // The last use: the broker cuts the body from this list in place.
            broker.receive(consume frames, last: last, now: .now, into: &actions)
        }
    }

    func perform(_ actions: [Broker.Action]) {
        for action in actions {
            switch action {
            case .send(let frames):
                sendRouter { () throws(ZMQError) in try router.send(frames) }
            case .request(let worker, let client, let body):
                sendRouter { () throws(ZMQError) in try MDP.sendRequest(to: worker, client: client, body: body, on: router) }
            case .reply(let client, let serviceFrame, let body):
                sendRouter { () throws(ZMQError) in try MDP.sendClientReply(to: client, serviceFrame: serviceFrame, body: body, on: router) }
            case .publish(let topic, let payload):
                publishKernelEvent(topic: topic, payload: payload)
                if let event = try? JSONDecoder().decode(ServiceEvent.self, from: Data(payload)) {
                    logger.info(
                        "\(topic == "bus.service.up" ? "service up" : "service down")",
                        metadata: [
                            "service": event.service, "instance": event.instance, "reason": event.reason,
                            "workers": String(event.workers),
                        ])
                }
            case .kernelRequest(let client, let body):
                let reply = answerKernelRequest(body)
                let serviceFrame = Array(Broker.kernelService.utf8)
                let replyBody = reply.encode(answering: body)
                sendRouter { () throws(ZMQError) in
                    try MDP.sendClientReply(to: client, serviceFrame: serviceFrame, body: .frames(replyBody), on: router)
                }
            case .rejected(let reason):
                rejected += 1
                if let suppressed = logLimiter.shouldLog("rejected:\(reason)", now: .now) {
                    logger.warning("rejected a request-plane message: \(reason)", metadata: suppressed > 0 ? ["suppressed": String(suppressed)] : [:])
                }
            }
        }
    }

    /// Runs one ROUTER send (`send` returns false when the peer's queue is full) and counts a
    /// message that could not be routed. Every send writes its first frame first, and only
    /// that frame can fail: a failed send sent nothing.
    @inline(__always)
    private func sendRouter(_ send: () throws(ZMQError) -> Bool) {
        do {
            if try !send() {
                unroutable += 1
                if logLimiter.shouldLog("router-full", now: .now) != nil {
                    logger.warning("a peer's queue is full; message dropped")
                }
            }
        } catch {
            // ROUTER_MANDATORY: the peer is gone (EHOSTUNREACH). Count it; the peer's own
            // timeout covers it.
            unroutable += 1
            if logLimiter.shouldLog("unroutable", now: .now) != nil {
                logger.debug("unroutable message", metadata: ["error": error.description])
            }
        }
    }

    // MARK: event plane

    /// Moves up to `limit` events from XSUB to XPUB without copying: the kernel's hot path.
    /// Stops early when a full subscriber queue refuses an event (it is then held).
    func forwardEvents(limit: Int, now: MonotonicTime) {
        if let held {
            guard deliver(topic: held.topic, heldSince: held.since, now: now) else { return }
            events.stalled += now - held.since
            self.held = nil
        }
        let nowMs = uptimeMs(now)
        // Read once per batch: `xsub` is a variable of this class, so each use per event cost
        // a retain, a release and an exclusivity check.
        let xsub = self.xsub
        for _ in 0..<limit {
            let count: Int
            do {
                guard let received = try parts.receive(xsub) else { return }
                count = received
            } catch {
                return
            }
            guard count == 3 else {
                noteMalformed("event with \(count) frames (expected [topic][meta][payload])")
                continue
            }
            let topicSize = parts.size(0)
            let metaSize = parts.size(1)
            let size = topicSize + metaSize + parts.size(2)
            guard topicSize > 0, topicSize <= Topic.maxLength,
                let metaBase = parts.bytes(1).baseAddress, let header = EventMeta.peek(metaBase, count: metaSize)
            else {
                noteMalformed("event with an empty or oversized topic or an unreadable meta frame")
                continue
            }
            // Consecutive events usually share a topic: reuse its key (no copy, and it was
            // validated when first seen).
            let topicBytes = parts.bytes(0)
            let sameTopic = lastTopicKey.hasSameBytes(as: topicBytes)
            let topicKey = sameTopic ? lastTopicKey : Array(topicBytes)
            if !sameTopic {
                lastCounters = nil
                if events.topics[topicKey] == nil,
                    UTF8Text.string(topicKey).map({ (try? Topic.validate($0)) != nil }) != true
                {
                    noteMalformed("event topic '\(String(decoding: topicKey.prefix(64), as: UTF8.self))' breaks the naming rules")
                    continue
                }
                lastTopicKey = topicKey
            }
            if let guardian {
                let identity = guardian.identity(userID: parts.property(0, "User-Id"))
                if !guardian.allowsPublish(identity, topic: topicKey) { continue }
            }
            // Counted and retained before the send, which empties the parts (and may free the
            // meta frame the source points into): accepted here, it is then delivered, or
            // counted as a drop.
            events.totalMessages += 1
            events.totalBytes += UInt64(size)
            let isProbe = topicKey.starts(with: KernelGuard.probePrefix)
            if !isProbe {
                // Assigned only when looked up: storing the same object again would cost a
                // retain and a release per event.
                if lastCounters == nil { lastCounters = events.counters(for: topicKey) }
                tally(lastCounters!, size: size, source: sourceBytes(parts.bytes(1)), nowMs: nowMs)
            }
            if header.flags.contains(.retained) {
                let topic = String(decoding: topicKey, as: UTF8.self)
                if !events.retain(
                    topic: topic, meta: Array(parts.bytes(1)), payload: Array(parts.bytes(2)), seq: header.seq,
                    reset: header.flags.contains(.reset))
                {
                    events.topics[topicKey]?.staleRetained += 1
                }
            }
            if catchUp.isRecording, !isProbe {
                catchUp.record(topic: topicKey, meta: parts.bytes(1), payload: parts.bytes(2))
            }
            if !deliver(topic: topicKey, heldSince: nil, now: now) {
                held = (topicKey, now)
                events.stalls += 1
                return
            }
        }
    }

    /// Sends the event in `parts` to every matching subscriber. False when a subscriber's queue
    /// is full and the grace period (from `heldSince`) is not over: the event stays in `parts`.
    /// Past the grace, or within a lossy window, it goes to the subscribers with room and is
    /// counted as a drop for the rest.
    private func deliver(topic: [UInt8], heldSince: MonotonicTime?, now: MonotonicTime) -> Bool {
        if sendParts() { return true }
        if now < lossyUntil {
            dropForFullQueues(topic: topic)
            return true
        }
        let config = kernel.config
        guard now - (heldSince ?? now) >= config.subscriberGrace else { return false }
        lossyUntil = now + config.subscriberLossyWindow
        if let suppressed = logLimiter.shouldLog("subscriber-full", now: now) {
            logger.warning(
                "a subscriber's queue stayed full for \(config.subscriberGrace): events its queue cannot take are dropped for it (counted in bus.stats events.drops) for the next \(config.subscriberLossyWindow)",
                metadata: suppressed > 0 ? ["suppressed": String(suppressed)] : [:])
        }
        dropForFullQueues(topic: topic)
        return true
    }

    /// Sends the three parts; false when the XPUB refused the first (`EAGAIN`: a full queue).
    private func sendParts() -> Bool {
        do {
            return try parts.send(xpub, count: 3)
        } catch {
            // Anything but a full queue (the context is ending) is not worth waiting for.
            if !error.isTerminated, let suppressed = logLimiter.shouldLog("events-out-send", now: .now) {
                logger.error(
                    "events-out send failed: \(error)", metadata: suppressed > 0 ? ["suppressed": String(suppressed)] : [:])
            }
            return true
        }
    }

    /// Sends the event in `parts` to the subscribers with room and counts the drop. The count is
    /// a lower bound: the failed write makes libzmq's `dist_t` take the full pipe out of the
    /// eligible set until its reader has consumed a low-water mark's worth, and `XPUB_NODROP`
    /// checks eligible pipes only, so the events sent meanwhile skip that subscriber without an
    /// `EAGAIN` the kernel could see (docs/PROTOCOL.md, Slow subscribers).
    private func dropForFullQueues(topic: [UInt8]) {
        let isProbe = topic.starts(with: KernelGuard.probePrefix)
        if !isProbe {
            catchUp.dropped(now: .now)
            catchUp.record(topic: topic, meta: parts.bytes(1), payload: parts.bytes(2))
        }
        lossy { _ = sendParts() }
        events.totalDrops += 1
        if !isProbe { events.topics[topic]?.drops += 1 }
    }

    /// Re-sends the newest event of every stream kept since the last drop (``TailCatchUp``),
    /// never holding: a full queue ends the round, retried later.
    func sendCatchUpRound(now: MonotonicTime) {
        catchUp.sendRound(now: now) { tail, meta in
            (try? xpub.send(tail.topic, meta, tail.payload)) == true
        }
    }

    /// Runs `body` with the XPUB dropping for full queues instead of refusing the send.
    private func lossy<T>(_ body: () -> T) -> T {
        try? xpub.set(ZMQ_XPUB_NODROP, 0)
        defer { try? xpub.set(ZMQ_XPUB_NODROP, 1) }
        return body()
    }

    /// Sends what the kernel produces itself (its events, retained snapshots), never holding
    /// it: false when a full queue dropped it.
    func sendOwn(_ frames: Frames) -> Bool {
        if (try? xpub.send(frames)) == true { return true }
        lossy { _ = try? xpub.send(frames) }
        // The full pipe now misses forwarded events as after any drop.
        catchUp.dropped(now: .now)
        return false
    }

    @inline(__always)
    private func tally(_ counters: EventPlane.TopicCounters, size: Int, source: UnsafeRawBufferPointer?, nowMs: Int64) {
        counters.messages += 1
        counters.bytes += UInt64(size)
        counters.lastSeenMs = nowMs
        if let source, !counters.lastSource.hasSameBytes(as: source) {
            counters.lastSource = Array(source)
            if counters.sources.count < 64 {
                counters.sources.insert(String(decoding: source, as: UTF8.self))
            }
        }
    }

    /// Milliseconds since the kernel started: a topic's last-seen time.
    func uptimeMs(_ now: MonotonicTime) -> Int64 { now.milliseconds(since: started) }

    /// The source field of a meta frame, in place.
    private func sourceBytes(_ meta: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard meta.count > EventMeta.fixedSize, let base = meta.baseAddress else { return nil }
        let length = Int(base.load(fromByteOffset: EventMeta.fixedSize, as: UInt8.self))
        guard EventMeta.fixedSize + 1 + length <= meta.count else { return nil }
        return UnsafeRawBufferPointer(start: base + EventMeta.fixedSize + 1, count: length)
    }

    private func noteMalformed(_ reason: String) {
        events.malformed += 1
        if let suppressed = logLimiter.shouldLog("malformed-event", now: .now) {
            logger.warning("dropped a malformed event: \(reason)", metadata: suppressed > 0 ? ["suppressed": String(suppressed)] : [:])
        }
    }

    /// Cuts off identities whose keys were removed: their workers leave the broker at once
    /// (callers of an in-flight request get 503), every later message of theirs is refused
    /// (their User-Id no longer maps to an identity), and when they had subscriptions the
    /// events-out endpoint is re-bound, which closes every subscriber connection: the others
    /// reconnect and resubscribe at once (their retained values come again as snapshots), the
    /// revoked key fails its handshake.
    func revoke(_ identities: [String]) {
        guard !identities.isEmpty, let guardian else { return }
        let revoked = Set(identities)
        let now = MonotonicTime.now
        for (worker, identity) in workerIdentities where revoked.contains(identity) {
            perform(broker.evict(worker: worker, now: now, reason: "key of \(identity) revoked"))
            workerIdentities[worker] = nil
        }
        // Connections cannot be closed one by one (libzmq has no per-peer close), so an
        // endpoint the revoked identity used is re-bound: every peer reconnects at once (Bus
        // publishers hold their events meanwhile; subscribers resubscribe and get the retained
        // values again), and the revoked key fails its handshake.
        if identities.contains(where: { guardian.subscribers[$0] != nil }) {
            rebindEventsOut(reason: "revoked: \(identities.joined(separator: ","))")
        }
        if identities.contains(where: { guardian.publishers.contains($0) }) {
            do {
                xsub = try Self.rebind(xsub) { () throws(ZMQError) in try Self.openXSUB(context: context, config: kernel.config) }
                try guardian.monitor(xsub, context: context, name: "events-in")
                installHandlers()
                logger.notice("events-in re-bound to cut off revoked publishers", metadata: ["revoked": identities.joined(separator: ",")])
            } catch {
                logger.critical("could not re-bind events-in after a revocation: \(error)")
                // The socket may be re-bound with only its monitor missing: poll what there is.
                installHandlers()
            }
        }
        guardian.forget(identities)
    }

    /// Re-binds events-out, closing every subscriber connection (libzmq has no per-peer close):
    /// they reconnect and subscribe again (their retained values come again as snapshots).
    func rebindEventsOut(reason: String) {
        do {
            xpub = try Self.rebind(xpub) { () throws(ZMQError) in try Self.openXPUB(context: context, config: kernel.config) }
            try guardian?.monitor(xpub, context: context, name: "events-out")
            events.subscriptions.removeAll()
            gate.reset(rebound: true)
            installHandlers()
            if logLimiter.shouldLog("events-out-rebound:\(reason)", now: .now) != nil {
                logger.notice("events-out re-bound", metadata: ["reason": reason])
            }
        } catch {
            logger.critical("could not re-bind events-out (\(reason)): \(error)")
            installHandlers()
        }
    }

    /// Closes `old` and opens its replacement on the same endpoint, retrying while libzmq's
    /// I/O thread releases the port.
    private static func rebind(_ old: ZMQSocket, _ open: () throws(ZMQError) -> ZMQSocket) throws(ZMQError) -> ZMQSocket {
        old.close()
        var lastError: ZMQError?
        for _ in 0..<50 {
            do {
                return try open()
            } catch {
                lastError = error
                usleep(10_000)
            }
        }
        throw lastError!
    }

    /// Publishes an event the kernel itself produces (source `kernel`).
    func publishKernelEvent(topic: String, payload: [UInt8], retained: Bool = false) {
        let seq = (kernelSeq[topic] ?? 0) + 1
        kernelSeq[topic] = seq
        let meta = EventMeta(
            flags: retained ? .retained : [], seq: seq, timestampMicros: WallClock.microsNow(), source: "kernel",
            instance: instance)
        let metaBytes = meta.encode()
        let key = Array(topic.utf8)
        updateTopicForKernel(key, size: key.count + metaBytes.count + payload.count)
        if !sendOwn([key, metaBytes, payload]) {
            events.totalDrops += 1
            events.topics[key]?.drops += 1
        }
        if catchUp.isRecording {
            metaBytes.withUnsafeBytes { meta in
                payload.withUnsafeBytes { catchUp.record(topic: key, meta: meta, payload: $0) }
            }
        }
        if retained {
            _ = events.retain(topic: topic, meta: metaBytes, payload: payload, seq: seq, reset: false)
        }
    }

    private func updateTopicForKernel(_ key: [UInt8], size: Int) {
        events.totalMessages += 1
        events.totalBytes += UInt64(size)
        let source = Array("kernel".utf8)
        let counters = events.counters(for: key)
        // Making counters may have forgotten the forwarder's.
        lastCounters = nil
        source.withUnsafeBytes { tally(counters, size: size, source: $0, nowMs: uptimeMs(.now)) }
    }
}
