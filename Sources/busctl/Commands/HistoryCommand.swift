import Bus
import Foundation

/// `busctl history TOPIC`: the stored history of a topic, from `persist.history`.
struct HistoryCommand: BusctlCommand {
    static let name = "history"
    static let overview = "Show the stored history of a topic (from the persist service)."
    static let usage = "TOPIC [--limit N] [--from-seq N] [--to-seq N] [--since-us T] [--until-us T] [--oldest-first] [--json]"
    static let maxPositionals: Int? = 1
    static let options =
        BusSettings.options + [
            OptionSpec("limit", short: "n", value: "N", help: "Most events shown.", default: "20"),
            OptionSpec("from-seq", value: "N", help: "Only sequence numbers from N."),
            OptionSpec("to-seq", value: "N", help: "Only sequence numbers up to N."),
            OptionSpec("since-us", value: "T", help: "Only events published at or after T (microseconds since the epoch)."),
            OptionSpec("until-us", value: "T", help: "Only events published at or before T."),
            OptionSpec("oldest-first", help: "Start from the oldest stored event (default: the newest N, shown oldest first)."),
            OptionSpec("json", help: "Print the events as a JSON array."),
            OptionSpec("timeout", value: "S", help: "Seconds to wait for persist.", default: "5"),
        ]
    static let discussion: String? = "Events are shown with their sequence number, publish time, source and how persist got them."

    var topic: String
    var limit: Int
    var filters: [String: Int] = [:]
    var oldestFirst: Bool
    var json: Bool
    var timeout: Duration
    var bus: BusSettings

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let topic = arguments.positionals.first else { throw UsageError("history needs a TOPIC") }
        self.topic = topic
        limit = try arguments.int("limit") ?? 20
        guard limit >= 1 else { throw UsageError("--limit must be at least 1") }
        for (option, key) in [("from-seq", "from_seq"), ("to-seq", "to_seq"), ("since-us", "since_us"), ("until-us", "until_us")] {
            if let value = try arguments.int(option) { filters[key] = value }
        }
        oldestFirst = arguments.flag("oldest-first")
        json = arguments.flag("json")
        timeout = try arguments.seconds("timeout") ?? .seconds(5)
        bus = try BusSettings(arguments)
    }

    func run() async throws -> Int32 {
        let client = try bus.makeClient()
        var events: [[String: Any]] = []
        var cursor: Any?
        do {
            repeat {
                var request: [String: Any] = filters
                request["topic"] = topic
                request["limit"] = min(1000, limit - events.count)
                request["order"] = oldestFirst ? "asc" : "desc"
                if let cursor { request["cursor"] = cursor }
                let page = try await PersistCLI.call(client, "history", request, timeout: timeout)
                events += page["events"] as? [[String: Any]] ?? []
                cursor = page["next_cursor"].flatMap { $0 is NSNull ? nil : $0 }
            } while cursor != nil && events.count < limit
        } catch {
            await client.close()
            throw error
        }
        if !oldestFirst { events.reverse() }
        await client.close()
        if json {
            print(PersistCLI.jsonText(events))
            return ExitCode.ok
        }
        if events.isEmpty {
            FileHandle.standardError.write(Data("no stored history for '\(topic)'\n".utf8))
            return ExitCode.ok
        }
        print(Self.row(["SEQ", "PUBLISHED (UTC)", "SOURCE", "ORIGIN", "PAYLOAD"]))
        for event in events {
            let seq = (event["seq"] as? NSNumber)?.stringValue ?? "?"
            let source = event["source"] as? String ?? ""
            let origin = event["origin"] as? String ?? ""
            print(Self.row([seq, PersistCLI.time(event["time_us"]), source, origin, PersistCLI.payloadText(event, max: 100)]))
        }
        return ExitCode.ok
    }
}

extension HistoryCommand {
    static let widths = [8, 27, 14, 9]

    /// Columns padded to ``widths``; the last one as is.
    static func row(_ columns: [String]) -> String {
        var line = ""
        for (index, column) in columns.enumerated() {
            if index < widths.count {
                line += column.padding(toLength: max(widths[index], column.count), withPad: " ", startingAt: 0) + "  "
            } else {
                line += column
            }
        }
        return line
    }
}

/// What `busctl history` and `busctl restore` share: a call to `persist` and formatting.
enum PersistCLI {
    /// Calls `persist.method` with a JSON object; throws ``BusError/reply(status:code:message:)``
    /// for an error reply (exit 4 when persist is not running, 2 otherwise).
    static func call(_ client: BusClient, _ method: String, _ body: [String: Any], timeout: Duration) async throws -> [String: Any] {
        let payload = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        let reply = try await client.call("persist", method, payload: Array(payload), timeout: timeout)
        guard Status.isSuccess(reply.status) else {
            throw BusError.reply(status: reply.status, code: reply.errorBody.code, message: reply.errorBody.message)
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any] else {
            throw BusError.malformed("persist.\(method) did not answer a JSON object")
        }
        return object
    }

    static func jsonText(_ value: Any) -> String {
        let data =
            (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The payload as compact JSON (or base64 for binary), cut at `max` characters.
    static func payloadText(_ event: [String: Any], max: Int) -> String {
        var text: String
        if let payload = event["payload"],
            let data = try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        {
            text = String(decoding: data, as: UTF8.self)
        } else {
            text = "base64:" + (event["payload_b64"] as? String ?? "")
        }
        if text.count > max { text = String(text.prefix(max - 3)) + "..." }
        return text
    }

    static func time(_ micros: Any?) -> String {
        guard let micros = (micros as? NSNumber)?.doubleValue else { return "-" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: micros / 1_000_000))
    }
}
