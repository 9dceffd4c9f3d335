import Bus
import Foundation

/// The options every busctl subcommand takes, and how a subcommand connects to the kernel.
struct BusSettings: Sendable {
    /// The common options plus busctl's own connection check.
    static let options: [OptionSpec] =
        OptionSpec.common + [
            OptionSpec(
                "connect-timeout", value: "S", help: "How long to wait for the kernel to answer bus.ping before exit 5.",
                environment: "BUSCTL_CONNECT_TIMEOUT", default: "2"),
            OptionSpec(
                "identity", value: "NAME", help: "With --keys: whose key pair to use (KEYS/NAME.key_secret).",
                environment: "BUSCTL_IDENTITY", default: "busctl"),
        ]
    static let json = OptionSpec("json", help: "Print JSON (one object per line for streams).")

    var endpoints: Endpoints
    var level: Logger.Level
    var connectTimeout: Duration
    /// `--keys` and `--identity`: CURVE credentials are loaded when a client is made.
    var keys: String?
    var identity: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        endpoints = try arguments.endpoints()
        level = try arguments.logLevel()
        connectTimeout = try arguments.positiveSeconds("connect-timeout") ?? .seconds(2)
        keys = arguments.value("keys")
        identity = arguments.value("identity") ?? "busctl"
    }

    /// A client that has not talked to the kernel yet.
    /// - Throws: ``CommandFailure`` (exit 78) when `--keys` names unusable key files.
    func makeClient() throws -> BusClient {
        var options = BusOptions(endpoints: endpoints, name: "busctl")
        options.logger = Logger(label: "busctl", level: level)
        if let keys {
            do {
                options.security = try ClientSecurity.load(keys: URL(fileURLWithPath: keys), identity: identity)
            } catch {
                throw CommandFailure("security: \(error)", code: ExitCode.configError)
            }
        }
        return BusClient(options: options)
    }

    /// Connects, checks that the kernel answers `bus.ping` within the connect timeout (or
    /// `limit` if shorter), runs `body`, and closes the client whatever happens.
    /// - Throws: ``CommandFailure`` with ``ExitCode/unreachable`` when the kernel does not answer.
    func withBus<T: Sendable>(limit: Duration? = nil, _ body: (BusClient) async throws -> T) async throws -> T {
        let client = try makeClient()
        do {
            try await ping(client, timeout: min(connectTimeout, limit ?? connectTimeout))
            let result = try await body(client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    /// Fails with exit 5 unless the kernel answers `bus.ping` within `timeout`.
    func ping(_ client: BusClient, timeout: Duration) async throws {
        let seconds = Format.seconds(timeout)
        do {
            let reply = try await client.call("bus", "ping", timeout: timeout)
            guard reply.status == 200 else {
                throw CommandFailure("the kernel at \(endpoints.requests) answered bus.ping with status \(reply.status)", code: ExitCode.unreachable)
            }
        } catch BusError.unreachable(_, let reason) where reason.contains("handshake") || reason.hasPrefix("cannot resolve") {
            throw CommandFailure("cannot reach the kernel at \(endpoints.requests): \(reason)", code: ExitCode.unreachable)
        } catch BusError.unreachable {
            throw CommandFailure(
                "cannot reach the kernel at \(endpoints.requests): no connection within \(seconds) s (is 'busctl kernel' running? see --kernel, BUS_KERNEL)",
                code: ExitCode.unreachable)
        } catch BusError.timeout {
            throw CommandFailure(
                "connected to \(endpoints.requests) but no answer to bus.ping within \(seconds) s (is it a swiftbus kernel?)",
                code: ExitCode.unreachable)
        }
    }
}
