import Bus
import Foundation

/// `busctl restart SERVICE`: asks the supervisor of `busctl up` to restart one service.
struct RestartCommand: BusctlCommand {
    static let name = "restart"
    static let overview = "Restart a service supervised by 'busctl up' (drain, stop, start)."
    static let usage = "SERVICE [--timeout S] [--json] [options]"
    static let maxPositionals: Int? = 1
    static let options =
        SupervisorCall.options + [
            OptionSpec("timeout", value: "S", help: "How long to wait for the restart to finish.", default: "30")
        ]
    static let discussion: String? = """
        The supervisor sends SIGTERM (the service drains: DISCONNECT, in-flight requests
        answered, exit), waits for the exit, starts the same executable with the same arguments
        and waits until the new process has registered. Requests sent meanwhile wait in the
        kernel for the new worker. Prints the new pid and instance.
        Exit status: 0 restarted, 2 error reply (e.g. 404 unknown_service), 3 no reply within
        --timeout, 4 no supervisor on the bus, 5 kernel unreachable, 64 bad arguments.
        """

    var call: SupervisorCall
    var service: String
    var timeout: Duration

    init(_ arguments: ParsedArguments) throws(UsageError) {
        call = try SupervisorCall(arguments)
        guard let service = arguments.positionals.first, !service.isEmpty else { throw UsageError("missing SERVICE") }
        self.service = service
        timeout = try UpCommand.positiveSeconds(arguments, "timeout") ?? .seconds(30)
    }

    func run() async throws -> Int32 {
        let reply = try await call.call("restart", SupervisorAPI.RestartRequest(service: service), timeout: timeout)
        if !call.json {
            let how = reply.oldStopped ? "" : "had already exited, "
            let old = reply.oldPid.map { "pid \($0)" + (reply.oldExit.map { " (\(how)\($0))" } ?? "") } ?? "no process"
            print("restarted \(reply.service): \(old) -> pid \(reply.pid), instance \(reply.instance)")
        }
        return ExitCode.ok
    }
}
