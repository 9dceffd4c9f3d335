import BusWire
import Foundation

/// `bus.retained`: one value by topic, or the values matching a pattern a page at a time, so a
/// reply stays under the 1 MiB message limit and a call walks a bounded number of topics
/// whatever the kernel holds.
extension KernelLoop {
    /// Values per page unless `limit` says otherwise, and the most a page can hold.
    static let retainedDefaultPage = 100
    static let retainedMaxPage = 1_000
    /// Roughly how many bytes of values a page may hold: well under the 1 MiB frame limit. A
    /// value larger than that alone is listed with `"too_large": true` and no payload (read it
    /// with `{"topic"}`).
    static let retainedBudgetBytes = 512 << 10
    /// The most retained topics one call looks at (matching or not) before it answers with what
    /// it found and a cursor.
    static let retainedWalkLimit = 2_000

    func retained(_ params: [String: Any]) -> Result<Any, ErrorBody> {
        let usage = "bus.retained takes {\"topic\": STRING} or {\"pattern\": STRING, \"after\"?: TOPIC, \"limit\"?: 1...\(Self.retainedMaxPage)}"
        if params["topic"] != nil && !(params["topic"] is String) || params["pattern"] != nil && !(params["pattern"] is String)
            || params["after"] != nil && !(params["after"] is String) || params["limit"] != nil && !(params["limit"] is Int)
        {
            return .failure(ErrorBody(code: "invalid_request", message: usage))
        }
        if let topic = params["topic"] as? String {
            guard let entry = events.retained[topic], let meta = try? EventMeta.decode(entry.meta) else {
                return .failure(ErrorBody(code: "not_found", message: "no retained value for topic '\(topic)'"))
            }
            return .success(Self.replyObject(topic, meta, entry.payload))
        }
        let patternText = params["pattern"] as? String ?? ">"
        guard let pattern = try? TopicPattern(patternText) else {
            return .failure(ErrorBody(code: "invalid_topic", message: "'\(patternText)' is not a valid topic pattern"))
        }
        let limit = min(Self.retainedMaxPage, max(1, params["limit"] as? Int ?? Self.retainedDefaultPage))
        let prefix = pattern.wirePrefix
        let after = (params["after"] as? String).map { Array($0.utf8) }
        // Start at the pattern's literal prefix, or after the cursor when that is further on.
        let resume = after.map { $0.lexicographicallyPrecedes(prefix) ? prefix : $0 } ?? prefix
        var values: [Any] = []
        var budget = Self.retainedBudgetBytes
        var walked = 0
        var last: [UInt8]?
        var more = false
        events.retainedOrder.forEach(from: resume, excludingStart: resume == after) { key in
            guard key.starts(with: prefix) else { return false }
            guard values.count < limit, walked < Self.retainedWalkLimit, budget > 0 else {
                more = true
                return false
            }
            walked += 1
            let topic = String(decoding: key, as: UTF8.self)
            guard pattern.matches(topic), let entry = events.retained[topic], let meta = try? EventMeta.decode(entry.meta) else {
                last = key
                return true
            }
            // The payload goes out as JSON (about its size) or base64 (a third more).
            let size = 300 + key.count + meta.source.utf8.count + meta.instance.utf8.count + entry.payload.count * 4 / 3
            var object: [String: Any]
            if size > Self.retainedBudgetBytes {
                object = RetainedValue(topic: topic, meta: meta, payload: []).jsonObject()
                object["payload_b64"] = nil
                object["too_large"] = true
                object["bytes"] = entry.payload.count
                budget -= 400
            } else if size > budget {
                // Only once something is on the page: the budget shrinks with each value added.
                more = true
                return false
            } else {
                object = Self.replyObject(topic, meta, entry.payload)
                budget -= size
            }
            values.append(object)
            last = key
            return true
        }
        var result: [String: Any] = ["values": values, "walked": walked]
        if more, let last { result["next"] = String(decoding: last, as: UTF8.self) }
        return .success(result)
    }

    /// A value as ``RetainedValue/jsonObject()`` shows it, with a JSON payload embedded as its
    /// own bytes rather than parsed and written again.
    static func replyObject(_ topic: String, _ meta: EventMeta, _ payload: [UInt8]) -> [String: Any] {
        var object = RetainedValue(topic: topic, meta: meta, payload: []).jsonObject()
        object["payload_b64"] = nil
        // Embedded only as UTF-8 without a byte-order mark: Foundation's parser also accepts a
        // BOM and UTF-16/32, which would not be valid inside the UTF-8 reply.
        if payload.first.map({ $0 < 0x80 && $0 != 0 }) == true, !payload.contains(0),
            (try? JSONSerialization.jsonObject(with: Data(payload), options: [.fragmentsAllowed])) != nil
        {
            object["payload"] = ReplyJSON.Raw(bytes: payload)
        } else {
            object["payload_b64"] = Data(payload).base64EncodedString()
        }
        return object
    }
}
