import BusSupport
import BusWire

/// Makes a loss at the end of a stream visible to the subscriber that suffered it.
///
/// When the kernel drops an event for a full subscriber queue, libzmq's `dist_t` takes that
/// subscriber's pipe out of the eligible set until its reader has consumed a low-water mark's
/// worth, and the events sent meanwhile skip it without a sign the kernel could see. A
/// subscriber sees such a loss as a gap at the stream's next event, but if the stream (one topic
/// from one publisher instance) goes quiet, no next event comes: the subscriber would keep a
/// stale last value without knowing.
///
/// So for ``Limits/window`` after each drop the kernel keeps the newest event of every stream
/// it forwards, and re-sends those, flagged ``EventMeta/Flags/repeated`` with their own seq, in
/// rounds: when the events-out socket's descriptor fires (a subscriber's pipe came back is one
/// of the commands that fire it) at most every ``Limits/interval``, and in any case after a
/// pause that starts at the interval and doubles after each round up to ``Limits/fallback``
/// (the command may be consumed inside a send, unseen; the doubling keeps the repeats every
/// subscriber of a stream receives to about ten per 30 s window). A
/// subscriber that has the event drops the repeat as a duplicate; one that lost the stream's end
/// gets its newest event, with the gap in sequence numbers before it. The kernel cannot tell
/// which pipe was skipped, so every subscriber of the stream gets each round.
///
/// Pure bookkeeping: the kernel loop records and sends; tested without sockets.
struct TailCatchUp {
    struct Limits: Sendable {
        /// How long after the last drop streams are kept and re-sent. Zero: never.
        var window: Duration = .seconds(30)
        /// Soonest next round after a descriptor firing.
        var interval: Duration = .milliseconds(250)
        /// Longest pause between rounds while anything is kept.
        var fallback: Duration = .seconds(8)
        /// Most streams kept; more are counted in ``overflow`` and not re-sent.
        var maxStreams = 4096
        /// Most bytes (topics, metas, payloads) kept.
        var maxBytes = 8 << 20
    }

    /// The newest event of one stream, as forwarded.
    final class Tail {
        /// Topic, a zero byte, instance: the stream.
        let key: [UInt8]
        let topic: [UInt8]
        var meta: [UInt8]
        var payload: [UInt8]

        init(key: [UInt8], topic: [UInt8], meta: [UInt8], payload: [UInt8]) {
            self.key = key
            self.topic = topic
            self.meta = meta
            self.payload = payload
        }

        var size: Int { topic.count + meta.count + payload.count }
    }

    let limits: Limits
    private(set) var tails: [[UInt8]: Tail] = [:]
    private(set) var bytes = 0
    /// Recording until then; nil when no drop happened within the window.
    private(set) var activeUntil: MonotonicTime?
    /// Events of streams not kept because a limit was reached.
    private(set) var overflow: UInt64 = 0
    private(set) var rounds: UInt64 = 0
    private(set) var sent: UInt64 = 0
    private var lastRound: MonotonicTime?
    private var fired = false
    /// The pause before the next round when the descriptor does not fire.
    private var pause: Duration = .zero
    /// The stream recorded last: consecutive events usually share it.
    private var last: (topic: [UInt8], instance: [UInt8], tail: Tail)?

    init(limits: Limits) {
        self.limits = limits
    }

    /// Within a window (`activeUntil` is set). Stored: the forwarder asks for every event, and
    /// a computed property made it copy the whole struct through its value witnesses when the
    /// struct held a `ContinuousClock.Instant?` (a type of another module, laid out at run time).
    private(set) var isRecording = false

    /// A drop happened: keep streams for the window from now.
    mutating func dropped(now: MonotonicTime) {
        guard limits.window > .zero else { return }
        activeUntil = now + limits.window
        isRecording = true
        pause = limits.interval
    }

    /// Keeps `meta` and `payload` as the newest event of the stream (topic, the meta's instance).
    /// `topic` is the caller's key array (shared, not copied).
    mutating func record(topic: [UInt8], meta: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) {
        guard isRecording, let instance = Self.instance(meta) else { return }
        if let last, last.topic == topic, last.instance.hasSameBytes(as: instance) {
            replace(last.tail, meta: meta, payload: payload)
            return
        }
        let key = topic + [0] + Array(instance)
        if let tail = tails[key] {
            if replace(tail, meta: meta, payload: payload) { last = (topic, Array(instance), tail) }
            return
        }
        let size = topic.count + meta.count + payload.count
        guard tails.count < limits.maxStreams, bytes + size <= limits.maxBytes else {
            overflow += 1
            return
        }
        let tail = Tail(key: key, topic: topic, meta: Array(meta), payload: Array(payload))
        tails[key] = tail
        bytes += size
        last = (topic, Array(instance), tail)
    }

    /// False when the newer event does not fit: the stream is then forgotten, since keeping
    /// the older event would re-send a value the stream has moved past.
    @discardableResult
    private mutating func replace(_ tail: Tail, meta: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) -> Bool {
        let grown = meta.count + payload.count - tail.meta.count - tail.payload.count
        guard bytes + grown <= limits.maxBytes else {
            tails[tail.key] = nil
            bytes -= tail.size
            last = nil
            overflow += 1
            return false
        }
        bytes += grown
        Self.overwrite(&tail.meta, with: meta)
        Self.overwrite(&tail.payload, with: payload)
        return true
    }

    /// Replaces the contents in place, keeping the buffer (no allocation while sizes repeat).
    private static func overwrite(_ array: inout [UInt8], with bytes: UnsafeRawBufferPointer) {
        array.removeAll(keepingCapacity: true)
        array.append(contentsOf: bytes)
    }

    /// The events-out socket's descriptor fired.
    mutating func descriptorFired() {
        if isRecording { fired = true }
    }

    /// When the next round is due, within the window; nil before the first round (due at once).
    private var nextRound: MonotonicTime? {
        lastRound.map { $0 + (fired ? limits.interval : pause) }
    }

    /// When the next round (or the end of the window) is due; nil when nothing is kept.
    func nextDue() -> MonotonicTime? {
        guard let activeUntil else { return nil }
        guard !tails.isEmpty else { return activeUntil }
        return min(activeUntil, nextRound ?? .now)
    }

    /// Ends the window when it is over; whether a round is due.
    mutating func roundDue(now: MonotonicTime) -> Bool {
        guard let activeUntil else { return false }
        if now >= activeUntil {
            self.activeUntil = nil
            isRecording = false
            tails = [:]
            bytes = 0
            last = nil
            fired = false
            lastRound = nil
            return false
        }
        guard !tails.isEmpty else { return false }
        return now >= nextRound ?? now
    }

    /// Sends every kept event (its meta flagged repeated) through `send` until it returns false
    /// (a queue is full: the round is retried after ``Limits/interval``).
    mutating func sendRound(now: MonotonicTime, _ send: (Tail, [UInt8]) -> Bool) {
        rounds += 1
        if let lastRound, !fired, now - lastRound >= pause { pause = min(pause * 2, limits.fallback) }
        lastRound = now
        fired = false
        var meta: [UInt8] = []
        for tail in tails.values {
            meta.removeAll(keepingCapacity: true)
            meta.append(contentsOf: tail.meta)
            meta[1] |= EventMeta.Flags.repeated.rawValue
            guard send(tail, meta) else {
                fired = true
                return
            }
            sent += 1
        }
    }

    /// The instance field of a meta frame (after the header and the source).
    static func instance(_ meta: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let sourceAt = EventMeta.fixedSize
        guard meta.count > sourceAt else { return nil }
        let instanceAt = sourceAt + 1 + Int(meta[sourceAt])
        guard meta.count > instanceAt else { return nil }
        let end = instanceAt + 1 + Int(meta[instanceAt])
        guard end <= meta.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: meta[(instanceAt + 1)..<end])
    }
}
