import Bus
import BusTestSupport
import Foundation

/// The whole bus as separate processes on free loopback ports, started the way `busctl up`
/// starts it (same arguments and environment), with the upstreams served by the local test
/// servers in Tests/interop. The run is the supervisor: the nemesis restarts what it killed.
/// With network namespaces (`--net`), the kernel runs in host 1 on that host's address and
/// everything else in host 2, where the run itself is.
final class Stack: @unchecked Sendable {
    // @unchecked: every stored property is set in init and never changed.
    /// The package's services in `busctl up`'s start order.
    static let services = ["persist", "auth", "feed", "weather", "events"]

    let work: URL
    let endpoints: Endpoints
    let keys: URL?
    let kernel: ChildProcess
    /// Services by name.
    let processes: [String: ChildProcess]
    /// The local upstreams (OAuth, Reddit, Open-Meteo), started once and never faulted.
    let upstreams: [ChildProcess]
    let oauthBase: String
    let redditLog: URL
    private let probe: BusClient

    init(options: ChaosOptions, work: URL, namespaces: NetworkNamespaces?) throws {
        self.work = work
        let logs = work.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        guard let base = FreePorts.kernelBase() else { throw StackError("no three consecutive free loopback ports") }
        endpoints = try Endpoints(kernel: "tcp://\(namespaces?.address(1) ?? "127.0.0.1"):\(base)")

        if options.secure {
            let dir = work.appendingPathComponent("keys")
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("authorized"), withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir.path)
            try CurveKeyPair.generate().write(name: "kernel", to: dir)
            for identity in Self.services + [Self.clientIdentity] {
                let pair = try CurveKeyPair.generate()
                try pair.write(name: identity, to: dir)
                try CurveKeyPair(publicKey: pair.publicKey, secretKey: nil).write(name: identity, to: dir.appendingPathComponent("authorized"))
            }
            keys = dir
        } else {
            keys = nil
        }

        let python = Self.python
        let interop = options.root.appendingPathComponent("Tests/interop")
        let oauthPort = try Self.freePort()
        let redditPort = try Self.freePort(excluding: [oauthPort])
        let weatherPort = try Self.freePort(excluding: [oauthPort, redditPort])
        oauthBase = "http://127.0.0.1:\(oauthPort)"
        let redditBase = "http://127.0.0.1:\(redditPort)"
        let weatherBase = "http://127.0.0.1:\(weatherPort)"
        redditLog = work.appendingPathComponent("reddit-requests.jsonl")
        upstreams = [
            ChildProcess(
                name: "oauth-server", executable: python,
                arguments: [interop.appendingPathComponent("oauth_server.py").path, "--port", "\(oauthPort)"],
                environment: [:], log: logs.appendingPathComponent("oauth-server.log")),
            ChildProcess(
                name: "reddit-server", executable: python,
                arguments: [
                    interop.appendingPathComponent("reddit_server.py").path, "--port", "\(redditPort)", "--fixtures",
                    options.root.appendingPathComponent("Tests/FeedCoreTests/Fixtures").path, "--log", redditLog.path,
                ], environment: [:], log: logs.appendingPathComponent("reddit-server.log")),
            ChildProcess(
                name: "weather-server", executable: python,
                arguments: [
                    interop.appendingPathComponent("weather_server.py").path, "--port", "\(weatherPort)", "--fixtures",
                    options.root.appendingPathComponent("Tests/WeatherCoreTests/Fixtures").path,
                ], environment: [:], log: logs.appendingPathComponent("weather-server.log")),
        ]

        let busctl = options.binDirectory.appendingPathComponent("busctl").path
        var common = [
            "--kernel", endpoints.requests, "--events-in", endpoints.eventsIn, "--events-out", endpoints.eventsOut, "--log-level", "warning",
        ]
        if let keys { common += ["--keys", keys.path] }
        let watch = ["BUS_EXIT_WITH_PARENT": String(getpid())]
        // In host 1 through `ip netns exec`, which execs the kernel in place: the pid is its own.
        let kernelCommand = namespaces?.inside(1, busctl, ["kernel"] + common) ?? (executable: busctl, arguments: ["kernel"] + common)
        kernel = ChildProcess(
            name: "kernel", executable: kernelCommand.executable, arguments: kernelCommand.arguments, environment: watch,
            log: logs.appendingPathComponent("kernel.log"))
        let extra: [String: [String]] = [
            "auth": [
                "--token-callers", "feed", "--provider", "oauth", "--oauth-authorize-url", "\(oauthBase)/authorize", "--oauth-token-url",
                "\(oauthBase)/token", "--oauth-revoke-url", "\(oauthBase)/revoke", "--oauth-userinfo-url", "\(oauthBase)/userinfo",
                "--oauth-client-id", "swiftbus-test", "--oauth-scopes", "identity read vote", "--oauth-redirect-uri", "\(oauthBase)/callback",
            ],
            "feed": ["--reddit-url", redditBase, "--reddit-public-url", redditBase],
            "weather": [
                "--geocoding-url", weatherBase, "--open-meteo-url", weatherBase, "--openweathermap-url", weatherBase, "--refresh-interval", "600",
                "--upstream-timeout", "2",
            ],
            "events": ["--import-sample"],
            // The run's own topics are never removed by retention (also not when the disk is
            // full), so the check finds every event persist acknowledged as committed.
            "persist": ["--retention", "chaos.=-:-,*=30d:10000"],
        ]
        let executables = [
            "persist": "PersistService", "auth": "AuthService", "feed": "FeedService", "weather": "WeatherService", "events": "EventService",
        ]
        var processes: [String: ChildProcess] = [:]
        for name in Self.services {
            let state = work.appendingPathComponent("state/\(name)")
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var env = watch.merging([
                "BUS_KERNEL": endpoints.requests, "BUS_EVENTS_IN": endpoints.eventsIn, "BUS_EVENTS_OUT": endpoints.eventsOut,
                "BUS_LOG_LEVEL": "warning",
                "BUS_STATE_DIR": state.path, "BUS_SERVICE": name,
            ]) { a, _ in a }
            if let keys { env["BUS_KEYS"] = keys.path }
            if name == "auth" { env["AUTH_OAUTH_CLIENT_SECRET"] = "test-secret" }
            processes[name] = ChildProcess(
                name: name, executable: options.binDirectory.appendingPathComponent(executables[name]!).path,
                arguments: common + ["--state-dir", state.path] + (extra[name] ?? []), environment: env,
                log: logs.appendingPathComponent("\(name).log"))
        }
        self.processes = processes
        probe = Self.client(endpoints: endpoints, keys: keys, name: "chaos-probe")
    }

    /// The identity of every client of the run (admitted with security on; the built-in policy
    /// lets it call every method but `auth.token`, `bus.reload` and `events.handover`, and publish
    /// under `chaos.`).
    static let clientIdentity = "chaos"

    static func client(endpoints: Endpoints, keys: URL?, name: String) -> BusClient {
        var options = BusOptions(endpoints: endpoints, name: name)
        options.logger = Logger(label: name, level: .error)
        if let keys { options.security = try? ClientSecurity.load(keys: keys, identity: clientIdentity) }
        return BusClient(options: options)
    }

    /// persist's data directory (`--state-dir`).
    var persistState: URL { work.appendingPathComponent("state/persist") }

    func client(_ name: String) -> BusClient { Self.client(endpoints: endpoints, keys: keys, name: name) }

    /// A process by name: `kernel` or a service.
    func process(_ name: String) -> ChildProcess { name == "kernel" ? kernel : processes[name]! }

    /// Starts the upstreams, the kernel, then each service once the previous one answers.
    func start() async throws {
        for upstream in upstreams { try upstream.start() }
        for upstream in upstreams {
            let port = Int(upstream.arguments[upstream.arguments.firstIndex(of: "--port")! + 1])!
            guard await Self.until(.seconds(20), { FreePorts.accepts(port) }) else {
                throw StackError(
                    "\(upstream.name) did not listen on \(port) (pip install -r Tests/interop/requirements.txt?); see \(upstream.log.path)")
            }
        }
        try kernel.start()
        guard await Self.until(.seconds(15), { await self.answers("kernel") }) else {
            throw StackError("the kernel did not answer; see \(kernel.log.path)")
        }
        for name in Self.services {
            try processes[name]!.start()
            guard await Self.until(.seconds(30), { await self.answers(name) }) else {
                throw StackError("\(name) did not answer; see \(processes[name]!.log.path)")
            }
        }
    }

    /// Whether `name` answers now: the kernel `bus.ping`, persist `stats` with `ready`, a
    /// service `stats`.
    func answers(_ name: String) async -> Bool {
        switch name {
        case "kernel":
            return (try? await probe.call("bus", "ping", timeout: .milliseconds(500)))?.status == 200
        case "persist":
            guard let reply = try? await probe.call("persist", "stats", timeout: .milliseconds(500)), reply.status == 200 else { return false }
            struct Ready: Decodable { var ready: Bool }
            return (try? JSONDecoder().decode(Ready.self, from: Data(reply.payload)))?.ready == true
        default:
            return (try? await probe.call(name, "stats", timeout: .milliseconds(500)))?.status == 200
        }
    }

    /// Whether the kernel and every service answer.
    func whole() async -> Bool {
        for name in ["kernel"] + Self.services where await !answers(name) { return false }
        return true
    }

    /// SIGKILL of every service and the kernel at once (a machine crash), then a start.
    func crashAndRestart() async throws {
        for name in ["kernel"] + Self.services { process(name).signal(SIGKILL) }
        for name in ["kernel"] + Self.services { await process(name).crash() }
        try kernel.start()
        guard await Self.until(.seconds(15), { await self.answers("kernel") }) else { throw StackError("the kernel did not answer after the crash") }
        for name in Self.services { try processes[name]!.start() }
        guard await Self.until(.seconds(60), { await self.whole() }) else { throw StackError("the stack did not answer after the crash") }
    }

    /// Stops everything: services in reverse order, the kernel, the upstreams.
    func shutdown() async {
        await probe.close()
        for name in Self.services.reversed() { await processes[name]!.stop() }
        await kernel.stop()
        for upstream in upstreams { await upstream.stop() }
    }

    /// Polls `condition` every 100 ms until it holds or `timeout` passes.
    static func until(_ timeout: Duration, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    static func freePort(excluding: [Int] = []) throws -> Int {
        for _ in 0..<500 {
            let port = Int.random(in: FreePorts.defaultRange)
            if !excluding.contains(port), FreePorts.isFree(port) { return port }
        }
        throw StackError("no free loopback port")
    }

    /// `$PYTHON`, or `python3` on the PATH.
    static var python: String {
        let env = ProcessInfo.processInfo.environment
        if let python = env["PYTHON"], !python.isEmpty { return python }
        for dir in (env["PATH"] ?? "/usr/bin").split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/python3") {
            return "\(dir)/python3"
        }
        return "/usr/bin/python3"
    }
}

/// The stack could not start or come back; the message names the process and its log.
struct StackError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
