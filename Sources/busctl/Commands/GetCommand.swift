import Bus
import Foundation

/// `busctl get TOPIC`: the value the kernel retains for a topic (or for every topic matching a
/// pattern).
struct GetCommand: BusctlCommand {
    static let name = "get"
    static let overview = "Print the retained (current) value of a topic."
    static let usage = "TOPIC|PATTERN [--json] [options]"
    static let maxPositionals: Int? = 1
    static let options = BusSettings.options + [BusSettings.json]
    static let discussion: String? = """
        Prints the topic, its sequence number, source and time, then the payload as indented
        JSON. A pattern with wildcards ('*' one token, '>' the rest) lists every matching
        retained topic, one line each. --json prints one object per value:
        {"topic","seq","source","instance","time","time_us","flags","content_type",
        "correlation_id","causation_id","payload"} (payload_b64 when it is not JSON).
        Exit status 1 when the kernel holds no value for the topic (or none matches).
        """

    var bus: BusSettings
    var pattern: TopicPattern
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        let text = try arguments.positional(0, "TOPIC")
        guard !text.isEmpty else { throw UsageError("TOPIC must not be empty (use '>' for every topic)") }
        do {
            pattern = try TopicPattern(text)
        } catch {
            throw UsageError(error.description)
        }
        if pattern.isLiteral {
            do { try Topic.validate(text) } catch { throw UsageError(error.description) }
        }
        json = arguments.flag("json")
    }

    func run() async throws -> Int32 {
        let pattern = self.pattern
        let values: [RetainedValue] = try await bus.withBus { client in
            if pattern.isLiteral {
                return try await client.retained(pattern.text, timeout: bus.connectTimeout).map { [$0] } ?? []
            }
            return try await client.retainedValues(matching: pattern.text, timeout: bus.connectTimeout)
        }
        guard !values.isEmpty else {
            throw CommandFailure(pattern.isLiteral ? "no retained value for topic '\(pattern.text)'" : "no retained topic matches '\(pattern.text)'")
        }
        if json {
            for value in values {
                var object = value.jsonObject()
                object["time"] = Format.iso(us: value.meta.timestampMicros)
                Output.jsonLine(object)
            }
        } else if pattern.isLiteral, let value = values.first {
            Output.line(Self.header(value))
            if let decoded = JSONInput.value(value.payload) {
                Output.line(Output.json(decoded, pretty: true))
            } else {
                Output.line(Format.payload(value.payload, contentType: value.meta.contentType, limit: nil))
            }
        } else {
            var table = Table("TOPIC", ">SEQ", "SOURCE", ">AGE", "PAYLOAD")
            let width = Output.terminalWidth
            for value in values {
                table.add([
                    value.topic, String(value.meta.seq), value.meta.source, Self.age(value),
                    Format.payload(value.payload, contentType: value.meta.contentType, limit: width.map { max(30, $0 - 60) } ?? 400),
                ])
            }
            Output.write(table.render())
        }
        return ExitCode.ok
    }

    static func header(_ value: RetainedValue) -> String {
        "\(value.topic)  seq \(value.meta.seq)  from \(value.meta.source) (\(value.meta.instance))  at \(Format.clock(us: value.meta.timestampMicros)), \(age(value)) ago"
    }

    static func age(_ value: RetainedValue) -> String {
        let now = Format.nowMicros()
        let time = value.meta.timestampMicros
        return Format.age(ms: now > time ? Int64((now - time) / 1000) : 0)
    }
}
