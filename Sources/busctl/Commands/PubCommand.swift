import Bus
import Foundation

/// `busctl pub TOPIC [JSON]`: publishes one event as `busctl`.
struct PubCommand: BusctlCommand {
    static let name = "pub"
    static let overview = "Publish one event (JSON from the argument or standard input)."
    static let usage = "TOPIC [JSON|-] [--retain] [options]"
    static let maxPositionals: Int? = 2
    static let options =
        BusSettings.options + [
            OptionSpec("retain", help: "Make it the topic's retained (current) value.")
        ]
    static let discussion: String? = """
        Without JSON, or with '-', the payload is read from standard input. The event's source
        is 'busctl'. busctl waits until the event has left for the kernel before it exits.
        Exit status 64 for a bad topic, 65 when the payload is not valid JSON, 5 when the
        kernel cannot be reached.
        """

    var bus: BusSettings
    var topic: String
    var payloadArgument: String?
    var retain: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        topic = try arguments.positional(0, "TOPIC")
        do { try Topic.validate(topic) } catch { throw UsageError(error.description) }
        payloadArgument = arguments.positionals.count > 1 ? arguments.positionals[1] : nil
        retain = arguments.flag("retain")
    }

    func run() async throws -> Int32 {
        if payloadArgument == nil || payloadArgument == "-", isatty(STDIN_FILENO) == 1 {
            throw UsageError("no JSON given: pass it after TOPIC or pipe it on standard input")
        }
        let payload = try JSONInput.read(payloadArgument, what: "JSON")
        let (topic, retain, bus) = (self.topic, self.retain, self.bus)
        try await bus.withBus { client in
            try await client.publish(topic, payload: payload, retain: retain)
            guard await client.flushPublishes(timeout: bus.connectTimeout) else {
                throw CommandFailure(
                    "the event could not be sent: the kernel's events-in endpoint \(bus.endpoints.eventsIn) did not accept a connection within \(Format.seconds(bus.connectTimeout)) s",
                    code: ExitCode.unreachable)
            }
        }
        Output.line("published \(payload.count) B to \(topic)\(retain ? " (retained)" : "")")
        return ExitCode.ok
    }
}
