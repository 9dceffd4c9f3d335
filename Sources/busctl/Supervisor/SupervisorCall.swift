import Bus
import Foundation

/// How `busctl restart` and `busctl replace` talk to the supervisor of `busctl up`: check the
/// kernel answers (else exit 5) and a supervisor is registered (else exit 4), call, and turn the
/// reply into output and an exit status.
struct SupervisorCall: Sendable {
    static let options: [OptionSpec] =
        OptionSpec.common + [
            OptionSpec("json", help: "Print the supervisor's reply as one JSON line."),
            OptionSpec("identity", value: "NAME", help: "With --keys: whose key pair to use.", environment: "BUSCTL_IDENTITY", default: "busctl"),
        ]

    var endpoints: Endpoints
    var level: Logger.Level
    var json: Bool
    var keys: String?
    var identity: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        endpoints = try arguments.endpoints()
        level = try arguments.logLevel()
        json = arguments.flag("json")
        keys = arguments.value("keys")
        identity = arguments.value("identity") ?? "busctl"
    }

    /// Calls `supervisor.method` and decodes the 2xx reply.
    /// - Throws: ``CommandFailure`` with exit 5 (kernel unreachable), 4 (no supervisor),
    ///   3 (no reply in time) or 2 (error reply, its status, code and message on one line).
    func call<Request: Encodable & Sendable>(
        _ method: String, _ request: Request, timeout: Duration
    ) async throws -> SupervisorAPI.ChangeReply {
        var options = BusOptions(endpoints: endpoints, name: "busctl")
        options.logger = Logger(label: "busctl", level: max(level, .warning))
        if let keys {
            do {
                options.security = try ClientSecurity.load(keys: URL(fileURLWithPath: keys), identity: identity)
            } catch {
                throw CommandFailure("security: \(error)", code: ExitCode.configError)
            }
        }
        let client = BusClient(options: options)
        do {
            let reply = try await call(client, method, request, timeout: timeout)
            await client.close()
            return reply
        } catch {
            await client.close()
            throw error
        }
    }

    private func call<Request: Encodable & Sendable>(
        _ client: BusClient, _ method: String, _ request: Request, timeout: Duration
    ) async throws -> SupervisorAPI.ChangeReply {
        let kernel = endpoints.requests
        let services: [ServiceSnapshot]
        switch await result({ () async throws(BusError) in try await client.services(timeout: .seconds(2)) }) {
        case .success(let value):
            services = value
        case .failure(.unreachable), .failure(.timeout):
            throw CommandFailure(
                "cannot reach the kernel at \(kernel) (is 'busctl up' running? see --kernel, BUS_KERNEL)", code: ExitCode.unreachable)
        case .failure(let error):
            throw error
        }
        guard services.contains(where: { $0.service == SupervisorAPI.service && !$0.instances.isEmpty }) else {
            throw CommandFailure(
                "no supervisor on the bus at \(kernel): 'busctl up' does not run there (503 no_such_service)", code: ExitCode.noSuchService)
        }
        let payload = Array(try JSONEncoder.bus.encode(request))
        let reply: ReplyBody
        switch await result({ () async throws(BusError) in try await client.call(SupervisorAPI.service, method, payload: payload, timeout: timeout) })
        {
        case .success(let value):
            reply = value
        case .failure(.timeout):
            throw CommandFailure("no reply from supervisor.\(method) within \(Supervisor.seconds(timeout)) s", code: ExitCode.timeout)
        case .failure(let error):
            throw error
        }
        guard Status.isSuccess(reply.status) else {
            let error = reply.errorBody
            if json { Self.printLine(["status": reply.status, "error": ["code": error.code, "message": error.message]]) }
            if reply.status == Status.unavailable, error.code == "no_such_service" {
                throw CommandFailure("no supervisor on the bus at \(kernel): \(error.message)", code: ExitCode.noSuchService)
            }
            throw CommandFailure("supervisor.\(method) answered \(reply.status) \(error.code): \(error.message)", code: ExitCode.errorReply)
        }
        do {
            let decoded = try JSONDecoder().decode(SupervisorAPI.ChangeReply.self, from: Data(reply.payload))
            if json, let object = try? JSONSerialization.jsonObject(with: Data(reply.payload)) {
                Self.printLine(["status": reply.status, "payload": object])
            }
            return decoded
        } catch {
            throw CommandFailure("supervisor.\(method) answered something that is not a restart/replace result: \(error)")
        }
    }

    private func result<T>(_ body: () async throws(BusError) -> T) async -> Result<T, BusError> {
        do throws(BusError) {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// Prints `object` as one JSON line on standard output.
    static func printLine(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
