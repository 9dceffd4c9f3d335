import BusSupport
import BusWire
import BusZMQ
import Foundation
import Synchronization

/// A connection to the bus: publish, subscribe, observe retained state, call methods, serve
/// methods. One I/O thread per client owns its sockets; every method here is safe from any
/// task.
public final class BusClient: Sendable {
    public let options: BusOptions
    let io: IOThread
    private let state = Locked(State())
    /// The last number handed out by ``nextID()``.
    private let lastID = Atomic<Int>(0)

    struct State {
        /// Per published topic: the last sequence number and the topic's bytes (the event's
        /// first frame, made once per topic instead of once per event).
        var seqs: [String: (seq: UInt64, bytes: [UInt8])] = [:]
        /// The last topic published and where it is in `seqs` (valid until `seqs` gets a new
        /// key): a stream of one topic skips hashing and validating it on every event.
        var lastTopic: (topic: String, index: Dictionary<String, (seq: UInt64, bytes: [UInt8])>.Index)?
        /// Topics whose retained publishes carry the `provisional` flag (see ``restore(_:as:deadline:service:)``).
        var provisional: Set<String> = []
        var closed = false
        /// The last encoded meta string fields (source and instance are this client's; the
        /// rest are per publish, and nearly always the same from one event to the next).
        var metaTail: (contentType: String, correlationID: String, causationID: String, bytes: [UInt8])?
    }

    /// The executor of this client's I/O thread. A task that prefers it
    /// (`Task(executorPreference: client.taskExecutor) { ... }` or
    /// `withTaskExecutorPreference(client.taskExecutor) { ... }`) runs on the thread that owns
    /// the sockets: a reply or an event resumes it with no hop to another thread, which is what
    /// latency-bound loops of calls want. Its code must not block or compute for long: every
    /// socket of the client waits while it runs (heartbeats included).
    public var taskExecutor: any TaskExecutor { io }

    /// True when called on this client's I/O thread (code running on ``taskExecutor``).
    public var isOnIOThread: Bool { io.isCurrent }

    /// The service name events are published under.
    public var name: String { options.name }
    /// This process's instance id.
    public var instance: String { options.instance }
    var logger: Logger { options.logger }

    /// Opens the sockets' thread; connections are made lazily and asynchronously, so this does
    /// not fail when the kernel is not up yet (requests then fail with ``BusError/unreachable``).
    public init(options: BusOptions) {
        self.options = options
        self.io = IOThread(
            endpoints: options.endpoints, logger: options.logger, name: options.name, security: options.security,
            subscriberGrace: options.subscriberGrace)
    }

    /// Closes every socket after flushing queued publishes. Pending requests fail with
    /// ``BusError/closed``.
    public func close() async {
        state.withLock { $0.closed = true }
        await io.stop()
    }

    /// A number no other call of this client got (requests, subscriptions): from 1 up.
    func nextID() -> Int {
        lastID.add(1, ordering: .relaxed).newValue
    }

    // MARK: publish

    /// Publishes `value` as JSON on `topic`.
    ///
    /// - Parameters:
    ///   - topic: a concrete topic (`auth.state`), no wildcards.
    ///   - retain: the kernel keeps it as the topic's current value. The first retained publish
    ///     of a topic continues the sequence number the kernel holds for it.
    /// - Throws: ``BusError/invalidTopic(_:reason:)``, ``BusError/invalidPayload(_:)``,
    ///   ``BusError/closed``.
    nonisolated(nonsending) public func publish<T: Encodable>(
        _ topic: String, _ value: T, retain: Bool = false, correlationID: String = "", causationID: String = ""
    ) async throws(BusError) {
        let payload: [UInt8]
        do {
            payload = Array(try JSONEncoder.bus.encode(value))
        } catch {
            throw .invalidPayload("cannot encode \(T.self) for '\(topic)': \(error)")
        }
        try await publish(topic, payload: payload, retain: retain, correlationID: correlationID, causationID: causationID)
    }

    /// Publishes raw payload bytes (JSON unless `contentType` says otherwise).
    ///
    /// Runs on the caller's executor (`nonisolated(nonsending)`): it takes a lock and copies the
    /// event into the I/O thread's queue, and suspends only while the backlog is over its
    /// high-water mark (flow control). A client numbers each topic's events in the order they
    /// are queued, also when several tasks publish the topic at once.
    nonisolated(nonsending) public func publish(
        _ topic: String, payload: [UInt8], retain: Bool = false, contentType: String = "application/json",
        correlationID: String = "", causationID: String = "", flags extra: EventMeta.Flags = []
    ) async throws(BusError) {
        var flags = extra
        if retain {
            try Topic.validate(topic)
            try checkSize(payload, what: "event on '\(topic)'")
            if !hasSequence(topic) {
                let current = try? await retained(topic)
                continueSequence(topic, after: current?.meta.seq ?? 0)
            }
            flags.insert(.retained)
            if isProvisional(topic) { flags.insert(.provisional) }
        }
        let backlog = try enqueue(
            topic, payload: payload, flags: flags, contentType: contentType, correlationID: correlationID, causationID: causationID)
        // Flow control instead of silent drops when the kernel cannot keep up.
        guard let backlog else { throw .closed }
        if backlog > IOThread.highWater { await io.waitForRoom() }
    }

    /// Numbers the event and queues it for the I/O thread, under one hold of the client's lock:
    /// two tasks publishing one topic queue their events in sequence order. The frames are
    /// copied into the I/O thread's packed queue (the meta frame written in place): no
    /// allocation per event on either thread, and no reference the I/O thread has to release.
    /// Returns the publish backlog, nil when closed.
    private func enqueue(
        _ topic: String, payload: [UInt8], flags: EventMeta.Flags, contentType: String, correlationID: String, causationID: String
    ) throws(BusError) -> Int? {
        try state.withLock { s throws(BusError) -> Int? in
            let index: Dictionary<String, (seq: UInt64, bytes: [UInt8])>.Index
            if let last = s.lastTopic, last.topic == topic {
                index = last.index
            } else {
                try Topic.validate(topic)
                if let found = s.seqs.index(forKey: topic) {
                    index = found
                } else {
                    s.seqs[topic] = (0, Array(topic.utf8))
                    index = s.seqs.index(forKey: topic)!
                }
                s.lastTopic = (topic, index)
            }
            try checkSize(payload, what: "event on '\(topic)'")
            if s.metaTail == nil || s.metaTail!.contentType != contentType || s.metaTail!.correlationID != correlationID
                || s.metaTail!.causationID != causationID
            {
                let tail = EventMeta.encodeTail(
                    source: options.name, instance: options.instance, contentType: contentType, correlationID: correlationID,
                    causationID: causationID)
                s.metaTail = (contentType, correlationID, causationID, tail)
            }
            s.seqs.values[index].seq += 1
            return io.publish(
                topic: s.seqs.values[index].bytes, flags: flags, seq: s.seqs.values[index].seq, timestampMicros: WallClock.microsNow(),
                metaTail: s.metaTail!.bytes, payload: payload)
        }
    }

    /// Sends already-encoded event frames (used by `busctl replay`).
    /// - Throws: ``BusError/malformed(_:)`` for no frames, ``BusError/closed``.
    public func send(event frames: Frames) throws(BusError) {
        guard !frames.isEmpty else { throw .malformed("an event has at least one frame") }
        guard io.publish(frames: frames) != nil else { throw .closed }
    }

    /// `what` is only built for the error (not on every publish and call).
    func checkSize(_ payload: [UInt8], what: @autoclosure () -> String) throws(BusError) {
        if payload.count > options.maxPayloadBytes {
            throw .invalidPayload(
                "\(what()) is \(payload.count) bytes, over the \(options.maxPayloadBytes)-byte limit (the kernel would drop the connection)")
        }
    }

    /// Makes the next sequence number of `topic` `seq + 1`, e.g. after restoring state whose
    /// last published value had `seq`. Never moves a sequence backwards.
    public func continueSequence(_ topic: String, after seq: UInt64) {
        state.withLock { s in
            if let index = s.seqs.index(forKey: topic) {
                s.seqs.values[index].seq = max(s.seqs.values[index].seq, seq)
            } else {
                s.seqs[topic] = (seq, Array(topic.utf8))
                s.lastTopic = nil
            }
        }
    }

    /// True when `topic` could not be restored at start, so its retained publishes are flagged
    /// `provisional` and never replace the state `persist` saved (docs/PERSISTENCE.md).
    public func isProvisional(_ topic: String) -> Bool {
        state.withLock { $0.provisional.contains(topic) }
    }

    func setProvisional(_ topic: String, _ provisional: Bool) {
        state.withLock { s in
            if provisional { s.provisional.insert(topic) } else { s.provisional.remove(topic) }
        }
    }

    func hasSequence(_ topic: String) -> Bool {
        state.withLock { $0.seqs[topic] != nil }
    }

    // MARK: subscribe

    /// Subscribes to topics matching any of `patterns` (`*` one token, `>` the rest).
    ///
    /// The sequence ends when the task iterating it is cancelled or the client closes. When the
    /// subscription is new on this process's connection, the kernel first sends the current
    /// value of every matching retained topic (``BusEvent/isSnapshot``).
    /// - Throws: ``BusError/invalidTopic(_:reason:)`` for a bad pattern.
    public func subscribe(_ patterns: [String], bufferSize: Int? = nil) throws(BusError) -> BusSubscription {
        var parsed: [TopicPattern] = []
        for pattern in patterns { parsed.append(try TopicPattern(pattern)) }
        if parsed.isEmpty { parsed = [try TopicPattern(">")] }
        return try subscribe(parsed, bufferSize: bufferSize ?? options.subscriptionBuffer, onExisting: nil)
    }

    /// Subscribes to one pattern; see ``subscribe(_:bufferSize:)``.
    public func subscribe(_ pattern: String) throws(BusError) -> BusSubscription {
        try subscribe([pattern])
    }

    /// - Parameter holdsIntake: whether a full buffer pauses the process's event intake (up to
    ///   ``BusOptions/subscriberGrace``) instead of dropping at once. Off for subscriptions that
    ///   keep only the newest values anyway (`observe`) and for the path probe: holding for
    ///   them would push the wait back to the kernel, where a drop past the grace could be the
    ///   stream's last event, which no later gap would reveal.
    func subscribe(
        _ patterns: [TopicPattern], bufferSize: Int, holdsIntake: Bool = true, onExisting: (@Sendable () -> Void)?
    ) throws(BusError) -> BusSubscription {
        let id = nextID()
        let io = self.io
        let unsubscribe: @Sendable () -> Void = {
            io.submit { loop in (try? loop.subscriberHandler())?.remove(id: id) }
        }
        let channel = EventChannel(capacity: bufferSize, holdsProducer: holdsIntake, onCancel: unsubscribe, loss: { 1 + $0.missed })
        let accepted = io.submit { loop in
            do throws(ZMQError) {
                let existing = try loop.subscriberHandler().add(id: id, patterns: patterns, channel: channel)
                if existing { onExisting?() }
            } catch {
                loop.logger.error("cannot subscribe", metadata: ["error": error.description])
                channel.finish()
            }
        }
        guard accepted else { throw .closed }
        return BusSubscription(
            channel: channel, lifetime: SubscriptionLifetime(unsubscribe),
            confirmer: { [weak self] timeout throws(BusError) in
                guard let self else { throw BusError.closed }
                try await self.confirmPath(timeout: timeout)
            })
    }

    /// Waits until every subscription and observation this client has made so far is live in
    /// the kernel (they travel asynchronously; what is published before one lands is not
    /// delivered to it, the slow-joiner rule). Use it after ``observe(_:as:bufferSize:)`` when
    /// every later change must be seen.
    /// - Throws: ``BusError/unreachable(endpoint:reason:)`` when not confirmed in time.
    public func confirmSubscriptions(timeout: Duration = .seconds(5)) async throws(BusError) {
        try await confirmPath(timeout: timeout)
    }

    /// Proves that every subscription made so far on this connection is live in the kernel:
    /// subscribes to a private probe topic (after the others, on the same connection, so the
    /// kernel applies it after them) and publishes probes until one comes back.
    func confirmPath(timeout: Duration) async throws(BusError) {
        let topic = "bus.probe.\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        let probe = try subscribe([try TopicPattern(topic)], bufferSize: 16, holdsIntake: false, onExisting: nil)
        let event: Frames = [
            Array(topic.utf8),
            EventMeta(seq: 1, timestampMicros: WallClock.microsNow(), source: options.name, instance: options.instance).encode(),
            Array("{}".utf8),
        ]
        let listener = Task {
            for await _ in probe { return true }
            return false
        }
        let sender = Task { [self] in
            repeat {
                try? send(event: event)
                try? await Task.sleep(for: .milliseconds(50))
            } while !Task.isCancelled
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            listener.cancel()
        }
        let confirmed = await listener.value
        sender.cancel()
        timer.cancel()
        if confirmed { return }
        throw .unreachable(endpoint: options.endpoints.eventsOut, reason: "the subscription was not confirmed within \(timeout)")
    }
}

/// Ends a subscription in the kernel-facing SUB when the last copy of it is gone.
final class SubscriptionLifetime: Sendable {
    private let end: @Sendable () -> Void
    init(_ end: @escaping @Sendable () -> Void) { self.end = end }
    deinit { end() }
}

/// The events of a subscription, as an `AsyncSequence`. Iterate it from one task; the
/// subscription ends when that task is cancelled or the sequence and its iterator are released.
public struct BusSubscription: AsyncSequence, Sendable {
    public typealias Element = BusEvent
    let channel: EventChannel
    let lifetime: SubscriptionLifetime
    let confirmer: @Sendable (Duration) async throws(BusError) -> Void

    public struct Iterator: AsyncIteratorProtocol {
        let channel: EventChannel
        let lifetime: SubscriptionLifetime
        /// The rest of the current batch, in reverse: events are moved out from the end (a copy
        /// out of the array and the array's own release of it would cost a retain and a
        /// release of each of the event's references).
        @usableFromInline var batch: [BusEvent] = []

        /// Inlinable so that taking an event of the current batch is inlined into the
        /// consumer's loop: no async call per event, only one per batch.
        @inlinable
        public mutating func next() async -> BusEvent? {
            if let event = batch.popLast() { return event }
            return await nextBatch()
        }

        @usableFromInline
        mutating func nextBatch() async -> BusEvent? {
            guard var next = await channel.nextEvents() else { return nil }
            // Reversed by moving the events, not through `reverse()`, whose swaps copy them
            // (a retain and a release of each reference).
            next.withUnsafeMutableBufferPointer { events in
                guard var low = events.baseAddress, events.count > 1 else { return }
                var high = low + (events.count - 1)
                while low < high {
                    let event = low.move()
                    low.moveInitialize(from: high, count: 1)
                    high.initialize(to: consume event)
                    low += 1
                    high -= 1
                }
            }
            batch = consume next
            return batch.popLast()
        }
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: channel, lifetime: lifetime)
    }

    /// Waits until the kernel forwards this subscription's events (subscriptions travel
    /// asynchronously; what is published before they land is not delivered, the slow-joiner
    /// rule). Retained values need no confirmation: the kernel sends them when it lands.
    /// - Throws: ``BusError/unreachable(endpoint:reason:)`` when not confirmed in time.
    public func confirm(timeout: Duration = .seconds(5)) async throws(BusError) {
        try await confirmer(timeout)
    }
}
