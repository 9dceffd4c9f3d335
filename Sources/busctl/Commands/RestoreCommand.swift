import Bus
import Foundation

/// `busctl restore TOPIC`: the state `persist` saved for a topic (what a service restarting
/// now would restore), from `persist.restore`.
struct RestoreCommand: BusctlCommand {
    static let name = "restore"
    static let overview = "Show the saved state of a topic, or of every topic under a prefix (from the persist service)."
    static let usage = "TOPIC [--prefix] [--json]"
    static let maxPositionals: Int? = 1
    static let options =
        BusSettings.options + [
            OptionSpec("prefix", help: "Treat TOPIC as a prefix (e.g. 'feed.') and show every saved topic under it."),
            OptionSpec("json", help: "Print the stored value(s) as JSON, with seq and meta fields."),
            OptionSpec("timeout", value: "S", help: "Seconds to wait for persist.", default: "5"),
        ]
    static let discussion: String? = "Reads only; nothing is published. Exit 2 when persist has nothing saved for TOPIC."

    var topic: String
    var prefix: Bool
    var json: Bool
    var timeout: Duration
    var bus: BusSettings

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let topic = arguments.positionals.first else { throw UsageError("restore needs a TOPIC") }
        self.topic = topic
        prefix = arguments.flag("prefix")
        json = arguments.flag("json")
        timeout = try arguments.seconds("timeout") ?? .seconds(5)
        bus = try BusSettings(arguments)
    }

    func run() async throws -> Int32 {
        let client = try bus.makeClient()
        let values: [[String: Any]]
        do {
            if prefix {
                var all: [[String: Any]] = []
                var cursor: String?
                repeat {
                    var request: [String: Any] = ["prefix": topic, "limit": 1000]
                    if let cursor { request["cursor"] = cursor }
                    let page = try await PersistCLI.call(client, "restore", request, timeout: timeout)
                    all += page["values"] as? [[String: Any]] ?? []
                    cursor = page["next_cursor"] as? String
                } while cursor != nil
                values = all
            } else {
                values = [try await PersistCLI.call(client, "restore", ["topic": topic], timeout: timeout)]
            }
        } catch {
            await client.close()
            throw error
        }
        await client.close()
        if json {
            print(PersistCLI.jsonText(prefix ? values as Any : values[0] as Any))
            return ExitCode.ok
        }
        for value in values {
            let flags = (value["flags"] as? NSNumber)?.uint8Value ?? 0
            let provisional = EventMeta.Flags(rawValue: flags).contains(.provisional) ? "  [provisional]" : ""
            print(
                "\(value["topic"] as? String ?? topic)  seq \((value["seq"] as? NSNumber)?.stringValue ?? "?")  from \(value["source"] as? String ?? "?") (\(value["instance"] as? String ?? "?"))  published \(PersistCLI.time(value["time_us"]))\(provisional)"
            )
            print("  " + PersistCLI.payloadText(value, max: prefix ? 200 : 100_000))
        }
        if values.isEmpty { FileHandle.standardError.write(Data("nothing saved under '\(topic)'\n".utf8)) }
        return ExitCode.ok
    }
}
