import Bus
import Foundation

/// Writes events as `monitor` shows them: aligned lines for people, or one JSON object per line.
struct EventPrinter {
    let json: Bool
    /// Never cut payloads.
    let full: Bool
    /// Columns of the terminal on standard output; nil when it is not one.
    let width = Output.terminalWidth
    private var topicWidth = 16
    private var sourceWidth = 8

    init(json: Bool, full: Bool) {
        self.json = json
        self.full = full
    }

    /// How much of a payload fits after `prefix`: the rest of the terminal line (at least 30
    /// characters), or 400 characters when not writing to a terminal.
    func payloadLimit(after prefix: String) -> Int? {
        if full { return nil }
        guard let width else { return 400 }
        return max(30, width - 1 - prefix.count)
    }

    /// The JSON object for an event.
    static func object(_ event: BusEvent) -> [String: Any] {
        var object: [String: Any] = [
            "topic": event.topic, "source": event.meta.source, "instance": event.meta.instance, "seq": event.meta.seq,
            "time": Format.iso(us: event.meta.timestampMicros), "time_us": event.meta.timestampMicros,
        ]
        JSONInput.embed(Array(event.payload), into: &object)
        if event.isSnapshot { object["snapshot"] = true }
        if event.missed > 0 { object["missed"] = event.missed }
        if event.outOfSequence { object["out_of_sequence"] = true }
        if event.meta.isRetained { object["retained"] = true }
        if event.meta.flags.contains(.replayed) { object["replayed"] = true }
        if event.meta.flags.contains(.repeated) { object["repeated"] = true }
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
        if event.meta.flags.contains(.repeated) { tags.append("repeated") }
        if event.meta.flags.contains(.reset) { tags.append("reset") }
        if event.outOfSequence { tags.append("OUT OF SEQUENCE") }
        var line = Format.clock(us: event.meta.timestampMicros) + "  "
        line += event.topic.padding(toLength: max(topicWidth, event.topic.count), withPad: " ", startingAt: 0) + "  "
        line += event.meta.source.padding(toLength: max(sourceWidth, event.meta.source.count), withPad: " ", startingAt: 0) + "  "
        line += ("#" + String(event.meta.seq)).padding(toLength: 6, withPad: " ", startingAt: 0) + " "
        if !tags.isEmpty { line += "[" + tags.joined(separator: ",") + "] " }
        line += Format.payload(Array(event.payload), contentType: event.meta.contentType, limit: payloadLimit(after: line))
        Output.line(text + line)
    }
}
