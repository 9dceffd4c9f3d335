import Bus
import Foundation
import Synchronization

/// Writes events as `monitor` shows them: aligned lines for people, or one JSON object per line.
struct EventPrinter {
    let json: Bool
    /// Longest payload text on a pretty line (nil: never cut).
    let payloadLimit: Int?
    private var topicWidth = 16
    private var sourceWidth = 8

    init(json: Bool, full: Bool) {
        self.json = json
        if full {
            payloadLimit = nil
        } else if let width = Output.terminalWidth {
            payloadLimit = max(40, width - 60)
        } else {
            payloadLimit = 400
        }
    }

    /// The JSON object for an event.
    static func object(_ event: BusEvent) -> [String: Any] {
        var object: [String: Any] = [
            "topic": event.topic, "source": event.meta.source, "instance": event.meta.instance, "seq": event.meta.seq,
            "time": Format.iso(us: event.meta.timestampMicros), "time_us": event.meta.timestampMicros,
        ]
        JSONInput.embed(event.payload, into: &object)
        if event.isSnapshot { object["snapshot"] = true }
        if event.missed > 0 { object["missed"] = event.missed }
        if event.meta.isRetained { object["retained"] = true }
        if event.meta.flags.contains(.replayed) { object["replayed"] = true }
        if event.meta.contentType != "application/json" { object["content_type"] = event.meta.contentType }
        if !event.meta.correlationID.isEmpty { object["correlation_id"] = event.meta.correlationID }
        if !event.meta.causationID.isEmpty { object["causation_id"] = event.meta.causationID }
        return object
    }

    mutating func print(_ event: BusEvent) {
        if json {
            Output.jsonLine(Self.object(event))
            return
        }
        var text = ""
        if event.missed > 0 {
            text += "--- gap: \(event.missed) event(s) missed before \(event.topic) #\(event.meta.seq) (from \(event.meta.instance)) ---\n"
        }
        topicWidth = min(40, max(topicWidth, event.topic.count))
        sourceWidth = min(24, max(sourceWidth, event.meta.source.count))
        var tags: [String] = []
        if event.isSnapshot {
            tags.append("current")
        } else if event.meta.isRetained {
            tags.append("retained")
        }
        if event.meta.flags.contains(.replayed) { tags.append("replayed") }
        if event.meta.flags.contains(.reset) { tags.append("reset") }
        text += Format.clock(us: event.meta.timestampMicros) + "  "
        text += event.topic.padding(toLength: max(topicWidth, event.topic.count), withPad: " ", startingAt: 0) + "  "
        text += event.meta.source.padding(toLength: max(sourceWidth, event.meta.source.count), withPad: " ", startingAt: 0) + "  "
        text += ("#" + String(event.meta.seq)).padding(toLength: 6, withPad: " ", startingAt: 0) + " "
        if !tags.isEmpty { text += "[" + tags.joined(separator: ",") + "] " }
        text += Format.payload(event.payload, contentType: event.meta.contentType, limit: payloadLimit)
        Output.line(text)
    }
}

/// Drops the kernel's re-sent current values a subscriber already has: a subscription that
/// arrives later (anyone's, with an overlapping prefix) makes the kernel send the snapshots to
/// every matching subscriber again.
struct SnapshotFilter {
    private var last: [String: UInt64] = [:]
    /// When true, every snapshot is dropped (only events published from now on pass).
    let liveOnly: Bool

    init(liveOnly: Bool) { self.liveOnly = liveOnly }

    mutating func admit(_ event: BusEvent) -> Bool {
        let key = event.topic + "\u{0}" + event.meta.instance
        let previous = last[key]
        if previous == nil || event.meta.seq > previous! { last[key] = event.meta.seq }
        guard event.isSnapshot else { return true }
        if liveOnly { return false }
        return previous == nil || event.meta.seq > previous!
    }
}

/// A counter shared between a running loop and the code that reports on it.
final class SharedCount: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ n: Int = 1) { value.add(n, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}
