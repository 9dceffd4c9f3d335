import Foundation

/// A retained event as `bus.retained` returns it: the meta fields spelled out and the payload
/// embedded as JSON (`payload`) or, when it is not JSON, as base64 (`payload_b64`).
public struct RetainedValue: Equatable, Sendable {
    public var topic: String
    public var meta: EventMeta
    public var payload: [UInt8]

    public init(topic: String, meta: EventMeta, payload: [UInt8]) {
        self.topic = topic
        self.meta = meta
        self.payload = payload
    }

    struct Fields: Codable {
        var topic: String
        var seq: UInt64
        var source: String
        var instance: String
        var time_us: UInt64
        var flags: UInt8
        var content_type: String
        var correlation_id: String
        var causation_id: String
        var payload_b64: String?
    }

    /// The JSON object for this value.
    public func jsonObject() -> [String: Any] {
        var object: [String: Any] = [
            "topic": topic, "seq": meta.seq, "source": meta.source, "instance": meta.instance,
            "time_us": meta.timestampMicros, "flags": Int(meta.flags.rawValue), "content_type": meta.contentType,
            "correlation_id": meta.correlationID, "causation_id": meta.causationID,
        ]
        if let value = try? JSONSerialization.jsonObject(with: Data(payload), options: [.fragmentsAllowed]) {
            object["payload"] = value
        } else {
            object["payload_b64"] = Data(payload).base64EncodedString()
        }
        return object
    }

    /// Reads one value from the JSON object built by ``jsonObject()``.
    public static func from(jsonObject object: Any) throws(BusError) -> RetainedValue {
        guard let dict = object as? [String: Any], let topic = dict["topic"] as? String,
            let seq = (dict["seq"] as? NSNumber)?.uint64Value
        else { throw .malformed("retained value lacks topic or seq") }
        var payload: [UInt8] = []
        if let b64 = dict["payload_b64"] as? String, let data = Data(base64Encoded: b64) {
            payload = Array(data)
        } else if let value = dict["payload"],
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
        {
            payload = Array(data)
        }
        let meta = EventMeta(
            flags: EventMeta.Flags(rawValue: UInt8(truncatingIfNeeded: (dict["flags"] as? NSNumber)?.intValue ?? 1)),
            seq: seq, timestampMicros: (dict["time_us"] as? NSNumber)?.uint64Value ?? 0,
            source: dict["source"] as? String ?? "", instance: dict["instance"] as? String ?? "",
            contentType: dict["content_type"] as? String ?? "application/json",
            correlationID: dict["correlation_id"] as? String ?? "", causationID: dict["causation_id"] as? String ?? "")
        return RetainedValue(topic: topic, meta: meta, payload: payload)
    }
}
