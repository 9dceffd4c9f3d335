import Bus
import Foundation

/// What `monitor` checks when it stops: a stream whose last events were lost (or still unread)
/// has no next event to show the gap, so for every retained topic it saw, the kernel's current
/// value is compared with the last sequence number shown.
final class TailCheck: Sendable {
    /// Topics checked at most: one `bus.retained` call each.
    static let maxTopics = 1_000

    struct Missing: Equatable, Sendable {
        let topic: String
        let lastSeen: UInt64
        let current: UInt64
        var count: UInt64 { current - lastSeen }
    }

    private let seen = Locked<[String: UInt64]>([:])

    /// Notes an event shown: retained topics (current values included) are checked at the end.
    func note(_ event: BusEvent) {
        guard event.meta.isRetained else { return }
        seen.withLock { seen in
            if seen[event.topic] == nil, seen.count >= Self.maxTopics { return }
            seen[event.topic] = max(seen[event.topic] ?? 0, event.meta.seq)
        }
    }

    /// The retained topics whose current value (published before `stoppedAtUs`, so it was due
    /// before the monitor stopped) has a higher sequence number than the last one shown.
    func missing(_ client: BusClient, stoppedAtUs: UInt64, timeout: Duration) async -> [Missing] {
        var missing: [Missing] = []
        for (topic, last) in seen.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            guard let current = try? await client.retained(topic, timeout: timeout) else { continue }
            if current.meta.seq > last, current.meta.timestampMicros <= stoppedAtUs {
                missing.append(Missing(topic: topic, lastSeen: last, current: current.meta.seq))
            }
        }
        return missing
    }
}
