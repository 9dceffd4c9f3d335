import Bus
import Foundation

/// `busctl call SERVICE METHOD [JSON]`: one request, the reply printed, the outcome as the exit
/// status.
struct CallCommand: BusctlCommand {
    static let name = "call"
    static let overview = "Call a method of a service and print the reply."
    static let usage = "SERVICE METHOD [JSON|-] [--timeout S] [--json] [options]"
    static let maxPositionals: Int? = 3
    static let options =
        BusSettings.options + [
            OptionSpec("timeout", value: "S", help: "How long to wait for the reply.", default: "5"),
            BusSettings.json,
        ]
    static let discussion: String? = """
        JSON is the request payload; '-' reads it from standard input; none sends an empty payload.
        A 2xx reply prints its payload as indented JSON. With --json every reply prints one line:
        {"status":200,"payload":...} or {"status":409,"error":{"code":...,"message":...}}.
        Exit status: 0 for a 2xx reply, 2 for an error reply (4xx/5xx, printed on stderr),
        3 when no reply came within --timeout, 4 for no such service (503 no_such_service:
        no worker registered before the deadline), 5 when the kernel cannot be reached,
        65 when JSON is not valid.
        """

    var bus: BusSettings
    var service: String
    var method: String
    var payloadArgument: String?
    var timeout: Duration
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        service = try arguments.positional(0, "SERVICE")
        method = try arguments.positional(1, "METHOD")
        guard !service.isEmpty, !method.isEmpty else { throw UsageError("SERVICE and METHOD must not be empty") }
        payloadArgument = arguments.positionals.count > 2 ? arguments.positionals[2] : nil
        timeout = try arguments.positiveSeconds("timeout") ?? .seconds(5)
        json = arguments.flag("json")
    }

    func run() async throws -> Int32 {
        let payload = try payloadArgument.map { try JSONInput.read($0, what: "JSON") } ?? []
        let (service, method, timeout) = (self.service, self.method, self.timeout)
        let reply = try await bus.withBus(limit: timeout) { client in
            try await client.call(service, method, payload: payload, timeout: timeout)
        }
        let success = Status.isSuccess(reply.status)
        if json {
            var object: [String: Any] = ["status": reply.status]
            if let from = reply.meta.from { object["from"] = from }
            if success {
                JSONInput.embed(reply.payload, into: &object)
            } else {
                object["error"] = ["code": reply.errorBody.code, "message": reply.errorBody.message]
            }
            Output.jsonLine(object)
        } else if success {
            if let value = JSONInput.value(reply.payload) {
                Output.line(Output.json(value, pretty: true))
            } else if !reply.payload.isEmpty {
                FileHandle.standardOutput.write(Data(reply.payload))
            }
        }
        if success { return ExitCode.ok }
        let error = reply.errorBody
        if reply.status == Status.unavailable, error.code == "no_such_service" {
            if !json { Output.error("error: no such service '\(service)': \(error.message)\n") }
            return ExitCode.noSuchService
        }
        if !json { Output.error("error: \(service).\(method) answered \(reply.status) \(error.code): \(error.message)\n") }
        return ExitCode.errorReply
    }
}
