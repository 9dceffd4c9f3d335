import Bus
import BusWire
import BusZMQ
import Foundation

/// The seed inputs of the bus's binary targets, made by the real encoders (so the corpus holds
/// every form the bus sends: three frames and one frame, JSON and binary meta). `BusFuzz
/// --write-seeds DIR` writes them to DIR/TARGET/seed-NAME; the text targets' seeds are fixture
/// files copied into the corpus.
public enum FuzzSeeds {
    /// Named seed inputs for `target`; empty for the targets seeded from fixture files.
    public static func seeds(for target: FuzzTarget) -> [(name: String, bytes: [UInt8])] {
        switch target {
        case .requestBody: return requests.map { ($0.name, FuzzFrames.join($0.frames)) }
        case .replyBody: return replies.map { ($0.name, FuzzFrames.join($0.frames)) }
        case .mdp: return messages.map { ($0.name, FuzzFrames.join($0.frames)) }
        case .eventMeta: return events
        case .recording: return recordings
        case .flatJSON, .topicPattern, .policy, .icalendar, .reddit, .openMeteo, .openWeatherMap: return []
        }
    }

    static let payload = Array(#"{"city_id":2950159,"units":"metric"}"#.utf8)

    static var requests: [(name: String, frames: Frames)] {
        let full = RequestBody(
            method: "forecast", meta: RequestMeta(id: "42", timeoutMs: 2500, traceID: "t-1", correlationID: "c-1", caller: "busctl"),
            payload: payload)
        let binary = RequestBody(method: "follow", meta: RequestMeta(id: "7", timeoutMs: 1000, caller: "weather"), payload: payload)
        return [
            ("three-frames", full.encode()),
            ("one-frame-json", full.encode(oneFrame: true)),
            ("one-frame-binary", binary.encode(oneFrame: true, binaryMeta: true)),
            ("empty-meta", RequestBody(method: "stats").encode()),
        ]
    }

    static var replies: [(name: String, frames: Frames)] {
        let ok = ReplyBody(status: 200, meta: ReplyMeta(id: "42", from: "weather-1", elapsedMicros: 830), payload: payload)
        let error = ReplyBody.error(404, code: "no_such_method", message: "weather has no method 'x'", id: "9", from: "kernel")
        return [
            ("ok-three-frames", ok.encode()),
            ("ok-one-frame-json", ok.encode(oneFrame: true)),
            ("ok-one-frame-binary", ok.encode(oneFrame: true, binaryMeta: true)),
            ("error", error.encode()),
        ]
    }

    static var messages: [(name: String, frames: Frames)] {
        let client = Array("client-1".utf8)
        let worker = Array("worker-1".utf8)
        var result: [(name: String, frames: Frames)] = requests.map {
            ("client-request-\($0.name)", [client] + MDP.clientRequest(service: "weather", body: $0.frames))
        }
        result += replies.map { ("worker-reply-\($0.name)", [worker] + MDP.workerReply(client: client, body: $0.frames)) }
        result.append(("worker-ready", [worker] + MDP.workerReady(service: "weather", metadata: Array(#"{"instance":"weather-1"}"#.utf8))))
        result.append(("worker-heartbeat", [worker] + MDP.workerCommand(.heartbeat)))
        result.append(("worker-disconnect", [worker] + MDP.workerCommand(.disconnect)))
        return result
    }

    /// Recordings as `busctl record` writes them: the header, then one line per event.
    static var recordings: [(name: String, bytes: [UInt8])] {
        let header = Recording.Header(startedUs: 1_767_225_600_000_000, patterns: ["weather.**", "auth.state"], kernel: "tcp://127.0.0.1:5555")
        let entries = events.enumerated().map { index, event in
            Recording.Entry(offsetUs: UInt64(index) * 1_500, topic: index == 0 ? "weather.state" : "auth.state", meta: event.bytes, payload: payload)
        }
        func file(_ lines: [String]) -> [UInt8] { Array(lines.joined(separator: "\n").utf8) + [0x0A] }
        return [
            ("header-only", file([header.line])),
            ("two-events", file([header.line] + entries.map(\.line))),
            ("blank-lines", file([header.line, "", entries[0].line, "  "])),
        ]
    }

    static var events: [(name: String, bytes: [UInt8])] {
        [
            (
                "plain",
                EventMeta(seq: 1, timestampMicros: 1_767_225_600_000_000, source: "weather", instance: "weather-1").encode()
            ),
            (
                "retained-correlated",
                EventMeta(
                    flags: .retained, seq: 918_273, timestampMicros: 1_767_225_600_123_456, source: "events", instance: "events-2",
                    contentType: "application/json", correlationID: "c-77", causationID: "e-76"
                ).encode()
            ),
        ]
    }
}
