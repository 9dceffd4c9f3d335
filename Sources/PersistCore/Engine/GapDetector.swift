import Bus

/// Tracks each publisher instance's sequence numbers per topic, the way `persist` sees them:
/// a skipped number is a gap (events lost before this one), a number already seen is a
/// duplicate (typically the kernel's last-value cache re-sending a value `persist` has).
public struct GapDetector: Sendable {
    public enum Verdict: Equatable, Sendable {
        /// A new event; `missed` events of this topic and instance were skipped before it.
        case new(missed: UInt64)
        /// Already seen (same or lower sequence number, delivered again as a snapshot or a
        /// fetched value): nothing new to store.
        case duplicate
    }

    private struct Key: Hashable {
        var topic: String
        var instance: String
    }

    private var last: [Key: UInt64] = [:]
    /// Most (topic, instance) pairs remembered; past it the memory is cleared, which at worst
    /// misses one gap per pair (the start-up catch-up covers the same ground).
    public let capacity: Int

    public init(capacity: Int = 200_000) {
        self.capacity = capacity
    }

    /// Records an event's sequence number and says whether it is new and what it skipped.
    ///
    /// Snapshots, replays and fetched values never count as gaps (they jump by design); a
    /// `reset` restarts the instance's sequence; a live event with a number not above the last
    /// one is a publisher restart (kept, no gap); a snapshot or fetched value not above it is a
    /// duplicate.
    public mutating func record(topic: String, meta: EventMeta, origin: EventOrigin) -> Verdict {
        let key = Key(topic: topic, instance: meta.instance)
        let seq = meta.seq
        guard let previous = last[key] else {
            if last.count >= capacity { last.removeAll(keepingCapacity: true) }
            last[key] = seq
            return .new(missed: 0)
        }
        if meta.flags.contains(.reset) {
            last[key] = seq
            return .new(missed: 0)
        }
        if seq <= previous {
            if origin == .live && !meta.flags.contains(.replayed) {
                last[key] = seq
                return .new(missed: 0)
            }
            return .duplicate
        }
        last[key] = seq
        if origin != .live || meta.flags.contains(.replayed) { return .new(missed: 0) }
        return .new(missed: seq - previous - 1)
    }

    /// The last sequence number seen from `instance` on `topic`.
    public func lastSeq(topic: String, instance: String) -> UInt64? {
        last[Key(topic: topic, instance: instance)]
    }
}
