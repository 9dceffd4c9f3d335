import BusSupport
import BusWire
import BusZMQ
import CZeroMQ
import Foundation

/// The process's one SUB socket: local subscriptions by pattern, reference-counted wire
/// prefixes, fan-out of each event to every matching local subscription.
final class SubscriberHandler: IOHandler {
    /// A local subscription. Kept by value in the handler's own array and changed in place
    /// through it: no object whose reference is counted per event (a class per subscription
    /// cost a retain and a release around each use), and no copy (a struct in a dictionary
    /// being iterated was copied on every write).
    struct Local {
        let id: Int
        let patterns: [TopicPattern]
        let channel: EventChannel
        var gaps = GapTracker()
        var pending: [BusEvent] = []

        /// Adds `event` to the batch unless it repeats one already seen, with the gap before it.
        mutating func accept(_ event: consuming BusEvent) {
            guard let missed = gaps.record(event) else { return }
            event.missed = missed
            event.outOfSequence = gaps.outOfSequence
            pending.append(event)
        }
    }

    /// What reading a batch changes, kept together so that `readable` changes it through one
    /// access for the whole batch: as fields of the handler (a class), every event paid dynamic
    /// exclusivity checks and a retain and a release of the arrays it read.
    struct Intake {
        var locals: [Local] = []
        /// Where in `locals` the subscriptions matching `lastTopic` are; nil after the topic
        /// changed or a subscription came or went. Consecutive events usually share their topic.
        var lastMatches: [Int]?
        /// The last topic's bytes and string: consecutive events usually share their topic.
        var lastTopic: (bytes: [UInt8], text: String) = ([], "")
        var metaCache = EventMeta.DecodeCache()
        var payloads = PayloadArena()
        var malformed: UInt64 = 0

        /// Receives up to `budget` messages from `socket` into `parts`, adds each event to the
        /// batch of every local subscription it matches, then hands each its batch.
        mutating func read(_ socket: ZMQSocket, into parts: ZMQParts, budget: Int, logger: Logger) {
            for _ in 0..<budget {
                let count: Int
                do {
                    guard let received = try parts.receive(socket) else { break }
                    count = received
                } catch {
                    logger.error("subscriber receive failed", metadata: ["error": error.description])
                    break
                }
                collect(parts, frameCount: count)
            }
            for index in locals.indices where !locals[index].pending.isEmpty {
                locals[index].channel.push(locals[index].pending)
                locals[index].pending.removeAll(keepingCapacity: true)
            }
        }

        private mutating func topic(_ bytes: UnsafeRawBufferPointer) -> String? {
            if !bytes.isEmpty, lastTopic.bytes.hasSameBytes(as: bytes) { return lastTopic.text }
            guard let text = UTF8Text.string(bytes.bindMemory(to: UInt8.self)) else { return nil }
            lastTopic = (Array(bytes), text)
            lastMatches = nil
            return text
        }

        private mutating func collect(_ parts: ZMQParts, frameCount: Int) {
            guard frameCount == 3, let topic = topic(parts.bytes(0)),
                let meta = try? EventMeta.decode(parts.bytes(1), cache: &metaCache)
            else {
                malformed += 1
                return
            }
            if lastMatches == nil { lastMatches = locals.indices.filter { locals[$0].patterns.contains { $0.matches(topic) } } }
            let count = lastMatches!.count
            guard count > 0 else { return }
            let event = BusEvent(topic: topic, meta: consume meta, payload: payloads.copy(parts.bytes(2)))
            // By position: iterating a slice of the matches retained and released their array.
            for position in 0..<(count - 1) { locals[lastMatches![position]].accept(event) }
            // Moved, not copied: the last (usually the only) subscription takes the event itself.
            locals[lastMatches![count - 1]].accept(consume event)
        }
    }

    let socket: ZMQSocket
    private var intake = Intake()
    private var locals: [Local] { intake.locals }
    private var prefixes: [[UInt8]: Int] = [:]
    /// Since when reading is paused because a subscription's buffer is full (the events wait
    /// in the socket and the kernel); nil while reading.
    private(set) var pausedSince: MonotonicTime?
    /// Until then, a full buffer drops instead of pausing (a consumer stayed stuck past the grace).
    private var lossyUntil = MonotonicTime.now
    private let grace: Duration
    private let thread: IOThread

    init(loop: IOLoop) throws(ZMQError) {
        socket = try loop.connect(.sub, to: loop.endpoints.eventsOut, tuning: .subscriber)
        // Made after the socket: a `ZMQParts` must be closed before it goes.
        parts = ZMQParts(capacity: 4)
        grace = loop.thread.subscriberGrace
        thread = loop.thread
    }

    /// The loop stops watching the socket while paused.
    var isPaused: Bool { pausedSince != nil }
    /// While paused, events stay queued in the socket (and then in the kernel's queue for it).
    func pausesReading(_ loop: IOLoop) -> Bool { isPaused }

    /// Adds a local subscription. Returns true when every wire prefix it needs was already
    /// subscribed (so the kernel will not send snapshots for it: fetch retained values instead).
    func add(id: Int, patterns: [TopicPattern], channel: EventChannel) -> Bool {
        var allExisting = true
        for prefix in Set(patterns.map(\.wirePrefix)) {
            let count = prefixes[prefix, default: 0]
            if count == 0 {
                allExisting = false
                try? socket.subscribe(prefix)
            }
            prefixes[prefix] = count + 1
        }
        intake.locals.append(Local(id: id, patterns: patterns, channel: channel))
        intake.lastMatches = nil
        return allExisting
    }

    func remove(id: Int) {
        guard let index = locals.firstIndex(where: { $0.id == id }) else { return }
        let local = intake.locals.remove(at: index)
        intake.lastMatches = nil
        // Finishing calls its room action, if the handler was waiting for it.
        local.channel.finish()
        for prefix in Set(local.patterns.map(\.wirePrefix)) {
            let count = prefixes[prefix, default: 1] - 1
            if count <= 0 {
                prefixes[prefix] = nil
                try? socket.unsubscribe(prefix)
            } else {
                prefixes[prefix] = count
            }
        }
    }

    /// Frames are read in place from libzmq's buffers: only the payload is copied (into the
    /// shared buffers of ``PayloadArena``), the topic and meta are compared with the previous
    /// event's and decoded without copies when they repeat.
    private let parts: ZMQParts

    /// Reads what is waiting (up to a bound, and no more than the fullest subscription buffer
    /// has room for), then hands each subscription its batch. With a full buffer it pauses:
    /// the events wait in the socket, then in the kernel, which holds publishers in turn.
    func readable(_ loop: IOLoop) {
        guard pausedSince == nil else { return }
        var budget = 4096
        let now = MonotonicTime.now
        if grace > .zero, now >= lossyUntil {
            for local in locals where local.channel.holdsProducer { budget = min(budget, local.channel.room) }
            if budget <= 0 {
                pause(loop, now: now)
                return
            }
        }
        intake.read(socket, into: parts, budget: budget, logger: loop.logger)
    }

    private func pause(_ loop: IOLoop, now: MonotonicTime) {
        pausedSince = now
        waitForRoom()
    }

    /// Asks every full buffer to resume reading once its consumer takes.
    private func waitForRoom() {
        let thread = self.thread
        for local in locals where local.channel.blocksProducer {
            local.channel.whenRoom { thread.submit { loop in loop.resumeSubscriber() } }
        }
    }

    /// Reading again: every full buffer has room, or the grace ran out (then full buffers drop
    /// for a while), or a subscription went away.
    func resume(_ loop: IOLoop) {
        guard pausedSince != nil else { return }
        if locals.contains(where: { $0.channel.blocksProducer }) {
            // Another buffer is still full: keep waiting for it (the tick ends the grace).
            waitForRoom()
            return
        }
        pausedSince = nil
        readable(loop)
    }

    func tick(_ loop: IOLoop, now: MonotonicTime) -> MonotonicTime? {
        guard let pausedSince else { return nil }
        let end = pausedSince + grace
        guard now >= end else { return end }
        lossyUntil = now + BusOptions.subscriberLossyWindow
        loop.logger.warning(
            "a subscription's buffer stayed full for \(grace): events it cannot take are dropped for it (reported as gaps) for the next \(BusOptions.subscriberLossyWindow)"
        )
        self.pausedSince = nil
        readable(loop)
        return nil
    }

    func close(_ loop: IOLoop) {
        loop.release(socket)
        socket.close()
        parts.close()
    }
}
