import Bus
import Foundation

/// `busctl replace SERVICE --binary PATH`: swaps a supervised service's executable without a
/// failed request.
struct ReplaceCommand: BusctlCommand {
    static let name = "replace"
    static let overview = "Replace a service supervised by 'busctl up' with a new binary, without downtime."
    static let usage = "SERVICE --binary PATH [--timeout S] [--json] [options]"
    static let maxPositionals: Int? = 1
    static let options =
        SupervisorCall.options + [
            OptionSpec("binary", value: "PATH", help: "The new executable (relative paths are from the current folder)."),
            OptionSpec("timeout", value: "S", help: "How long the new process has to register.", default: "10"),
        ]
    static let discussion: String? = """
        The supervisor starts PATH with the arguments the service runs with, waits until the new
        instance has registered, then sends the old process SIGTERM: it drains (DISCONNECT,
        in-flight requests answered, exit), so callers see no failed request. From then on the
        new binary is the one supervised and restarted. If the new process exits or does not
        register within --timeout, it is killed and the old one keeps serving (reply 500 or 504).
        Exit status: 0 replaced, 2 error reply (404 unknown_service, 400 bad_binary, 500
        start_failed, 504 register_timeout, 409 busy), 3 no reply in time, 4 no supervisor on
        the bus, 5 kernel unreachable, 64 bad arguments.
        """

    var call: SupervisorCall
    var service: String
    var binary: String
    var timeout: Duration

    init(_ arguments: ParsedArguments) throws(UsageError) {
        call = try SupervisorCall(arguments)
        guard let service = arguments.positionals.first, !service.isEmpty else { throw UsageError("missing SERVICE") }
        self.service = service
        guard let binary = arguments.value("binary"), !binary.isEmpty else { throw UsageError("missing --binary PATH") }
        self.binary = URL(fileURLWithPath: binary).standardizedFileURL.path
        timeout = try UpCommand.positiveSeconds(arguments, "timeout") ?? .seconds(10)
    }

    func run() async throws -> Int32 {
        let request = SupervisorAPI.ReplaceRequest(
            service: service, binary: binary,
            timeoutMs: Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        // The reply comes after the new process registered and the old one drained and exited.
        let reply = try await call.call("replace", request, timeout: timeout + .seconds(20))
        if !call.json {
            let how = reply.oldStopped ? "drained, " : "had already exited, "
            let old = reply.oldPid.map { "pid \($0)" + (reply.oldExit.map { " (\(how)\($0))" } ?? "") } ?? "no process"
            print("replaced \(reply.service): \(old) -> pid \(reply.pid) running \(reply.binary), instance \(reply.instance)")
        }
        return ExitCode.ok
    }
}
