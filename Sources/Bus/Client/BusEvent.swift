import BusSupport
import BusWire
import BusZMQ
import Foundation

/// One event as a subscriber sees it: `[topic][meta][payload]` decoded.
public struct BusEvent: Sendable, Equatable {
    public let topic: String
    public let meta: EventMeta
    /// The payload's bytes. A received event's payload shares a buffer with other events'
    /// (``EventPayload`` says how much a kept one keeps alive).
    public let payload: EventPayload
    /// How many events of this topic from this publisher instance were lost just before this
    /// one (a gap in sequence numbers). Zero when none were.
    public internal(set) var missed: UInt64 = 0
    /// True when its sequence number is not above the last one seen for its stream: a
    /// duplicate or an event out of order (two publishers numbering one stream, a publisher
    /// restarted under the same instance). For a retained event the stream is the topic,
    /// whatever the instance: a state topic has one sequence. Never a normal event. Snapshots,
    /// replayed events and the kernel's repeats of events already seen are not marked.
    public internal(set) var outOfSequence = false

    public init(topic: String, meta: EventMeta, payload: EventPayload, missed: UInt64 = 0) {
        self.topic = topic
        self.meta = meta
        self.payload = payload
        self.missed = missed
    }

    /// An event whose payload is a copy of `payload`.
    public init(topic: String, meta: EventMeta, payload: [UInt8], missed: UInt64 = 0) {
        self.init(topic: topic, meta: meta, payload: EventPayload(payload), missed: missed)
    }

    /// True when the kernel re-sent the topic's retained value because a subscription arrived.
    public var isSnapshot: Bool { meta.flags.contains(.snapshot) }

    /// Decodes the JSON payload (read in place, not copied).
    /// - Throws: ``BusError/invalidPayload(_:)`` naming the type and the topic.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws(BusError) -> T {
        do {
            return try payload.decodeJSON(T.self)
        } catch {
            throw .invalidPayload("event on '\(topic)' is not a \(T.self): \(error)")
        }
    }

    /// The wire frames of the event.
    public var frames: Frames { [Array(topic.utf8), meta.encode(), Array(payload)] }

    /// Decodes `[topic][meta][payload]`.
    public static func decode(_ frames: Frames) throws(BusError) -> BusEvent {
        guard frames.count == 3 else { throw .malformed("an event has 3 frames, this one has \(frames.count)") }
        guard let topic = UTF8Text.string(frames[0]) else { throw .malformed("event topic is not UTF-8") }
        return BusEvent(topic: topic, meta: try EventMeta.decode(frames[1]), payload: frames[2])
    }
}

/// Per-topic, per-publisher-instance sequence tracking: what makes lost events visible.
struct GapTracker {
    private struct Key: Hashable {
        let topic: String
        let instance: String
    }

    private var last: [Key: UInt64] = [:]
    /// The most recent key and its sequence number, kept out of `last` while events keep coming
    /// from it (the common case: one publisher's stream of one topic), so most events cost two
    /// string comparisons instead of hashing both strings.
    private var current: Key?
    private var currentSeq: UInt64 = 0
    /// The highest sequence number of each retained topic's live events, any instance.
    private var retainedSeq: [String: UInt64] = [:]
    /// Whether the event ``record(_:)`` looked at last was out of sequence
    /// (``BusEvent/outOfSequence``).
    private(set) var outOfSequence = false

    /// Records an event and returns how many were missed before it (0 when none, or for the
    /// first event seen from a publisher instance, or for a replayed/snapshot event); nil for
    /// an event the kernel repeated (``EventMeta/Flags/repeated``) that was already seen: not
    /// to be delivered again.
    mutating func record(_ event: BusEvent) -> UInt64? {
        let seq = event.meta.seq
        outOfSequence = false
        let plain = !event.isSnapshot && !event.meta.flags.contains(.replayed)
        // A reset starts a state topic's sequence over, wherever it was.
        let reset = plain && event.meta.flags.contains(.reset)
        if reset, event.meta.isRetained { retainedSeq[event.topic] = seq }
        // A state topic's current value (a snapshot) is part of its one sequence too.
        if event.meta.isRetained, !event.meta.flags.contains(.reset), !event.meta.flags.contains(.replayed) {
            if let last = retainedSeq[event.topic], seq <= last {
                if plain {
                    if event.meta.flags.contains(.repeated) { return nil }
                    outOfSequence = true
                }
            } else {
                retainedSeq[event.topic] = seq
            }
        }
        let previous: UInt64?
        if let current, current.topic == event.topic, current.instance == event.meta.instance {
            previous = currentSeq
        } else {
            if let current { last[current] = currentSeq }
            let key = Key(topic: event.topic, instance: event.meta.instance)
            previous = last[key]
            current = key
            currentSeq = previous ?? seq
        }
        guard let previous else {
            currentSeq = seq
            return 0
        }
        if reset {
            currentSeq = seq
            return 0
        }
        if seq <= previous {
            if event.meta.flags.contains(.repeated) { return nil }
            if plain { outOfSequence = true }
            return 0
        }
        currentSeq = seq
        if event.isSnapshot || event.meta.flags.contains(.replayed) { return 0 }
        return seq - previous - 1
    }
}
