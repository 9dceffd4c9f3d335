import Foundation

/// The kernel's view of the event plane: per-topic counters, who publishes what, who
/// subscribes to what, and the last retained message per topic.
struct EventPlane {
    /// A class, changed in place: the forwarder keeps the last topic's counters and updates
    /// them without a dictionary look-up (hashing the topic byte by byte) per event.
    final class TopicCounters {
        var messages: UInt64 = 0
        var bytes: UInt64 = 0
        var drops: UInt64 = 0
        var staleRetained: UInt64 = 0
        var lastSource: [UInt8] = []
        var sources: Set<String> = []
        /// When the topic was last seen, in milliseconds since the kernel started
        /// (`KernelLoop.uptimeMs`).
        var lastSeenMs: Int64 = 0
    }

    struct Retained {
        var meta: [UInt8]
        var payload: [UInt8]
        var seq: UInt64
    }

    var topics: [[UInt8]: TopicCounters] = [:]
    /// The keys of `topics` in byte order: `bus.stats` pages through it.
    private(set) var topicOrder = SortedKeys()
    private(set) var retained: [String: Retained] = [:]
    /// The topics of `retained` in byte order: `bus.retained` pages through it and a new
    /// subscription finds the values under its prefix without walking the others.
    private(set) var retainedOrder = SortedKeys()
    /// Subscription prefixes currently announced by subscribers, with their count.
    var subscriptions = SubscriptionCounts()
    var malformed: UInt64 = 0
    var retainedRefused: UInt64 = 0
    var totalMessages: UInt64 = 0
    var totalBytes: UInt64 = 0
    var totalDrops: UInt64 = 0
    /// Times a full subscriber queue made the kernel hold the event stream, and for how long.
    var stalls: UInt64 = 0
    var stalled: Duration = .zero
    let maxRetained: Int

    init(maxRetained: Int) {
        self.maxRetained = maxRetained
    }

    /// Keeps a retained message if it is newer than the one held (higher seq, or the reset
    /// flag). Returns false for a stale one.
    mutating func retain(topic: String, meta: [UInt8], payload: [UInt8], seq: UInt64, reset: Bool) -> Bool {
        if let current = retained[topic] {
            guard reset || seq > current.seq else { return false }
        } else if retained.count >= maxRetained {
            retainedRefused += 1
            return false
        } else {
            retainedOrder.insert(Array(topic.utf8))
        }
        retained[topic] = Retained(meta: meta, payload: payload, seq: seq)
        return true
    }

    /// Most topics with counters; past it the least recently seen tenth is forgotten.
    static let maxTopics = 100_000

    /// The counters of `key`, made when the topic is first seen (forgetting the least recently
    /// seen tenth of all topics when there are ``maxTopics``).
    mutating func counters(for key: [UInt8]) -> TopicCounters {
        if let counters = topics[key] { return counters }
        if topics.count >= Self.maxTopics { forgetOldTopics() }
        let counters = TopicCounters()
        topics[key] = counters
        topicOrder.insert(key)
        return counters
    }

    mutating func forgetOldTopics() {
        let byAge = topics.sorted { $0.value.lastSeenMs < $1.value.lastSeenMs }
        for (key, _) in byAge.prefix(Self.maxTopics / 10) { topics[key] = nil }
        topicOrder = SortedKeys(topics.keys)
    }

    mutating func subscription(_ frame: [UInt8]) {
        guard let kind = frame.first, kind <= 1 else { return }
        let prefix = Array(frame.dropFirst())
        if kind == 1 {
            subscriptions.add(prefix)
        } else {
            subscriptions.remove(prefix)
        }
    }
}
