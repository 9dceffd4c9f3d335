import Foundation

/// One event as a subscriber sees it: `[topic][meta][payload]` decoded.
public struct BusEvent: Sendable, Equatable {
    public let topic: String
    public let meta: EventMeta
    public let payload: [UInt8]
    /// How many events of this topic from this publisher instance were lost just before this
    /// one (a gap in sequence numbers). Zero when none were.
    public internal(set) var missed: UInt64 = 0

    public init(topic: String, meta: EventMeta, payload: [UInt8], missed: UInt64 = 0) {
        self.topic = topic
        self.meta = meta
        self.payload = payload
        self.missed = missed
    }

    /// True when the kernel re-sent the topic's retained value because a subscription arrived.
    public var isSnapshot: Bool { meta.flags.contains(.snapshot) }

    /// Decodes the JSON payload.
    /// - Throws: ``BusError/invalidPayload(_:)`` naming the type and the topic.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws(BusError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(payload))
        } catch {
            throw .invalidPayload("event on '\(topic)' is not a \(T.self): \(error)")
        }
    }

    /// The wire frames of the event.
    public var frames: Frames { [Array(topic.utf8), meta.encode(), payload] }

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

    /// Records an event and returns how many were missed before it (0 when none, or for the
    /// first event seen from a publisher instance, or for a replayed/snapshot event); nil for
    /// an event the kernel repeated (``EventMeta/Flags/repeated``) that was already seen: not
    /// to be delivered again.
    mutating func record(_ event: BusEvent) -> UInt64? {
        let seq = event.meta.seq
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
        if seq <= previous { return event.meta.flags.contains(.repeated) ? nil : 0 }
        currentSeq = seq
        if event.isSnapshot || event.meta.flags.contains(.replayed) { return 0 }
        return seq - previous - 1
    }
}
