import Bus
import BusTestSupport
import Foundation
import Testing

/// A kernel started as a real `busctl kernel` process on free loopback ports, plus helpers to
/// start services and clients against it. Everything started is stopped by ``shutdown()``.
final class Harness: @unchecked Sendable {
    // @unchecked: `processes` and `clients` are Mutex-guarded; the rest is immutable.
    // Set once more only when the first kernel could not bind (in startKernel, before use).
    private(set) var kernelURL: String
    private(set) var endpoints: Endpoints
    private(set) var kernel: TestProcess!
    private let processes = Locked<[TestProcess]>([])
    private let clients = Locked<[BusClient]>([])
    let kernelArguments: [String]
    /// With security: the keys folder (kernel, `test` and `busctl` identities, and one per
    /// service started), removed by ``shutdown()``.
    let keys: URL?

    /// Security is on when `secure` is true or `BUS_TEST_SECURITY=1` (the second pass of the
    /// integration suite).
    init(kernelArguments: [String] = [], secure: Bool = Harness.securityByDefault) throws {
        let port = FreePorts.kernelBase()
        kernelURL = "tcp://127.0.0.1:\(port)"
        endpoints = try Endpoints(kernel: kernelURL)
        self.kernelArguments = kernelArguments
        if secure {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bus-keys-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try CurveKeyPair.generate().write(name: "kernel", to: dir)
            keys = dir
            for identity in ["test", "busctl"] { try authorize(identity) }
            // The test identity stands for every in-process client: it may do anything; `feed`
            // may call `auth.token`, as in the built-in policy.
            let policy =
                #"{"defaults": {"publish": {"allow": ["{name}.>"]}, "subscribe": {"allow": [">"]}, "call": {"allow": [">"], "deny": ["auth.token", "bus.reload"]}, "serve": {"allow": ["{name}"]}}, "identities": {"test": {"publish": {"allow": [">"]}, "call": {"allow": [">"]}, "serve": {"allow": [">"]}}, "feed": {"call": {"allow": [">"], "deny": ["bus.reload"]}}, "busctl": {"publish": {"allow": [">"]}, "call": {"allow": [">"], "deny": ["auth.token"]}, "serve": {"allow": []}}}}"#
            try Data(policy.utf8).write(to: dir.appendingPathComponent("policy.json"))
        } else {
            keys = nil
        }
    }

    static var securityByDefault: Bool { ProcessInfo.processInfo.environment["BUS_TEST_SECURITY"] == "1" }

    /// Creates `identity`'s key pair (once) and admits it (`authorized/<identity>.key`).
    func authorize(_ identity: String) throws {
        guard let keys else { return }
        guard !FileManager.default.fileExists(atPath: keys.appendingPathComponent("\(identity).key_secret").path) else { return }
        let pair = try CurveKeyPair.generate()
        try pair.write(name: identity, to: keys)
        try CurveKeyPair(publicKey: pair.publicKey, secretKey: nil).write(name: identity, to: keys.appendingPathComponent("authorized"))
    }

    /// Admits a new identity on the running kernel (writes its keys, then `bus.reload`).
    func admit(_ identity: String) async throws {
        guard keys != nil else { return }
        try authorize(identity)
        let reply = try await client(name: "probe").call("bus", "reload")
        guard reply.status == 200 else { throw HarnessError("bus.reload failed: \(reply.status)") }
    }

    /// The kernel's `bus.stats` answer as a JSON object.
    func kernelStats() async throws -> [String: Any] {
        let reply = try await client().call("bus", "stats")
        return try #require(try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any])
    }

    /// Environment that points a child process at this kernel (and its keys).
    var environment: [String: String] {
        var env = ["BUS_KERNEL": kernelURL]
        if let keys { env["BUS_KEYS"] = keys.path }
        return env
    }

    /// Starts the kernel and waits until it answers `bus.ping`.
    /// A port checked free can still be taken before the kernel binds it (another test picking
    /// at the same moment): then it retries on other ports.
    func startKernel() async throws {
        for attempt in 1...3 {
            var arguments = ["kernel", "--kernel", kernelURL] + kernelArguments
            if let keys { arguments += ["--keys", keys.path] }
            let kernel = try TestProcess(Binaries.busctl, arguments, name: "kernel")
            self.kernel = kernel
            track(kernel)
            let probe = client(name: "probe")
            let up = await eventually(timeout: .seconds(10)) {
                (try? await probe.call("bus", "ping", timeout: .milliseconds(300)))?.status == 200 || !kernel.isRunning
            }
            if up && kernel.isRunning { return }
            _ = await kernel.waitForExit(timeout: .seconds(2))
            if attempt < 3, kernel.stderr.contains("Address already in use") {
                kernelURL = "tcp://127.0.0.1:\(FreePorts.kernelBase())"
                endpoints = try Endpoints(kernel: kernelURL)
                continue
            }
            throw HarnessError("kernel did not answer within 10 s; stderr:\n\(kernel.stderr)")
        }
    }

    /// Runs `busctl` with arguments and returns when it exits.
    func busctl(
        _ arguments: [String], stdin: Data? = nil, timeout: Duration = .seconds(30),
        environment extra: [String: String] = [:]
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        var env = environment
        for (k, v) in extra { env[k] = v }
        let process = try TestProcess(Binaries.busctl, arguments, name: "busctl", environment: env, stdin: stdin)
        track(process)
        guard let status = await process.waitForExit(timeout: timeout) else {
            let state = process.kernelState
            await process.stop()
            throw HarnessError(
                "busctl \(arguments.joined(separator: " ")) did not exit within \(timeout) (pid \(process.pid), \(state)); stdout:\n\(process.stdout)\nstderr:\n\(process.stderr)"
            )
        }
        return (status, process.stdout, process.stderr)
    }

    /// Starts a long-running process (a service, `busctl monitor`, ...).
    func spawn(_ executable: String, _ arguments: [String], name: String? = nil, environment extra: [String: String] = [:]) throws -> TestProcess {
        var env = environment
        for (k, v) in extra { env[k] = v }
        let process = try TestProcess(executable, arguments, name: name, environment: env)
        track(process)
        return process
    }

    /// Starts the fixture service and waits until the kernel lists it.
    @discardableResult
    func startTestService(name: String = "testsvc", arguments: [String] = []) async throws -> TestProcess {
        let before = try await instances(of: name)
        try await admit(name)
        let process = try spawn(Binaries.testService, ["--name", name] + arguments, name: name)
        let registered = await eventually {
            ((try? await self.instances(of: name)) ?? []).count > before.count || !process.isRunning
        }
        guard registered, process.isRunning else {
            throw HarnessError("\(name) did not register; stderr:\n\(process.stderr)")
        }
        return process
    }

    /// The instances of `service` the kernel lists now.
    func instances(of service: String) async throws -> [ServiceSnapshot.Instance] {
        let services = try await client(name: "probe").services(timeout: .seconds(2))
        return services.first { $0.service == service }?.instances ?? []
    }

    /// A `BusClient` in the test process, closed by ``shutdown()``.
    func client(name: String = "test") -> BusClient {
        if let existing = clients.withLock({ $0.first { $0.name == name } }) { return existing }
        var options = BusOptions(endpoints: endpoints, name: name)
        options.logger = Logger(label: "test.\(name)", level: .warning)
        if let keys { options.security = try? ClientSecurity.load(keys: keys, identity: "test") }
        let client = BusClient(options: options)
        clients.withLock { $0.append(client) }
        return client
    }

    func track(_ process: TestProcess) {
        processes.withLock { $0.append(process) }
    }

    /// Stops every process (services before the kernel) and closes every client.
    func shutdown() async {
        for client in clients.withLock({ $0 }) { await client.close() }
        let all = processes.withLock { $0 }
        for process in all.reversed() where process !== kernel { await process.stop() }
        await kernel?.stop()
        if let keys { try? FileManager.default.removeItem(at: keys) }
    }

    /// BusOptions for a client of this kernel (with the `test` identity under security).
    func options(name: String) -> BusOptions {
        var options = BusOptions(endpoints: endpoints, name: name)
        options.logger = Logger(label: "test.\(name)", level: .warning)
        if let keys { options.security = try? ClientSecurity.load(keys: keys, identity: "test") }
        return options
    }

    /// Runs `body` with a started harness and always shuts it down.
    static func with(
        kernelArguments: [String] = [], secure: Bool = Harness.securityByDefault,
        _ body: (Harness) async throws -> Void
    ) async throws {
        let harness = try Harness(kernelArguments: kernelArguments, secure: secure)
        do {
            try await harness.startKernel()
            try await body(harness)
        } catch {
            await harness.shutdown()
            throw error
        }
        await harness.shutdown()
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
