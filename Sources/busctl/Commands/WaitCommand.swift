import Bus
import Foundation

/// `busctl wait SERVICE...`: blocks until every named service is registered (for scripts).
struct WaitCommand: BusctlCommand {
    static let name = "wait"
    static let overview = "Wait until services are registered (for scripts)."
    static let usage = "SERVICE... [--timeout S] [--json] [options]"
    static let maxPositionals: Int? = nil
    static let options =
        BusSettings.options + [
            OptionSpec("timeout", value: "S", help: "Give up after S seconds.", default: "30"),
            BusSettings.json,
        ]
    static let discussion: String? = """
        Polls bus.services every 100 ms until each SERVICE has an instance that is not draining.
        The kernel may start after this command: it keeps trying until --timeout.
        Exit status 0 when all are registered, 3 at the timeout (the missing ones are named),
        5 when the kernel could not be reached at all during --timeout.
        --json prints {"ready":[...],"missing":[...]}.
        """

    var bus: BusSettings
    var services: [String]
    var timeout: Duration
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        services = arguments.positionals
        guard !services.isEmpty else { throw UsageError("missing SERVICE") }
        if let empty = services.first(where: \.isEmpty) { throw UsageError("a SERVICE name is empty: '\(empty)'") }
        timeout = try arguments.positiveSeconds("timeout") ?? .seconds(30)
        json = arguments.flag("json")
    }

    func run() async throws -> Int32 {
        let client = try bus.makeClient()
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var reached = false
        var missing = services
        while true {
            let remaining = deadline - clock.now
            if remaining > .zero, let registered = try? await client.services(timeout: min(remaining, .seconds(1))) {
                reached = true
                let live = Set(registered.filter { $0.instances.contains { !$0.draining } }.map(\.service))
                missing = services.filter { !live.contains($0) }
                if missing.isEmpty { break }
            }
            if clock.now >= deadline { break }
            try? await Task.sleep(for: min(.milliseconds(100), max(.zero, deadline - clock.now)))
        }
        await client.close()
        let ready = services.filter { !missing.contains($0) }
        if json { Output.jsonLine(["ready": ready, "missing": missing]) }
        if missing.isEmpty {
            if !json { Output.line("ready: \(ready.joined(separator: ", "))") }
            return ExitCode.ok
        }
        guard reached else {
            throw CommandFailure(
                "cannot reach the kernel at \(bus.endpoints.requests) within \(Format.seconds(timeout)) s (is 'busctl kernel' running?)",
                code: ExitCode.unreachable)
        }
        throw CommandFailure(
            "timed out after \(Format.seconds(timeout)) s waiting for: \(missing.joined(separator: ", "))"
                + (ready.isEmpty ? "" : " (registered: \(ready.joined(separator: ", ")))"),
            code: ExitCode.timeout)
    }
}
