import Bus
import Foundation

/// `busctl up`: runs the kernel and the services on this machine as supervised child processes.
struct UpCommand: BusctlCommand {
    static let name = "up"
    static let overview = "Run the kernel and every service on this machine, supervised."
    static let usage = "[--only NAMES] [--state-dir DIR] [--service NAME=PATH [--service-args NAME=ARGS]]... [options]"
    static let options =
        OptionSpec.common + [
            OptionSpec("only", value: "NAMES", help: "Start only these services (comma-separated)."),
            OptionSpec(
                "state-dir", value: "DIR",
                help: "Where services keep their data; each gets DIR/NAME (default: $XDG_DATA_HOME/swiftbus or ~/.local/share/swiftbus)."),
            OptionSpec(
                "service", value: "NAME=PATH",
                help: "Also supervise the executable PATH as service NAME; for a package service, run PATH instead of its build (repeatable).",
                repeatable: true),
            OptionSpec(
                "service-args", value: "NAME=ARGS",
                help: "More arguments for service NAME, split as a shell would: --service-args 'x=--name x' (repeatable).", repeatable: true),
            OptionSpec("bin-dir", value: "DIR", help: "Where the package's service executables are (default: busctl's folder)."),
            OptionSpec("register-timeout", value: "S", help: "How long each process has to register (the kernel: to answer).", default: "10"),
            OptionSpec("stop-timeout", value: "S", help: "How long a process has to exit after SIGTERM before SIGKILL.", default: "3"),
            OptionSpec("secure", help: "Turn on CURVE security: keys in STATE/keys, made on first run (or the --keys folder)."),
        ]
    static let discussion: String? = """
        Starts 'busctl kernel' (this binary) on --kernel, then the package's services in this
        order: persist (PersistService), auth (AuthService), feed (FeedService), weather
        (WeatherService), events (EventService), each found next to busctl (or in --bin-dir),
        then every --service in the order given. A service that is not built gets one line and
        is skipped. Each starts after the previous one registered (or failed to within
        --register-timeout) and gets one status line: name, pid, instance, or why it failed.

        Every service is started as:
          PATH --kernel URL --events-in URL --events-out URL --log-level LEVEL
               --state-dir STATE/NAME [DEFAULTS] [ARGS from --service-args NAME=ARGS]
        where DEFAULTS is '--token-callers feed' for auth (feed may read the access token;
        --service-args 'auth=--token-callers ...' replaces it), '--import-sample' for events
        (the sample calendar on its first start; it skips it when it restores saved events)
        and nothing for the others,
        with BUS_KERNEL, BUS_EVENTS_IN, BUS_EVENTS_OUT, BUS_LOG_LEVEL, BUS_STATE_DIR,
        BUS_SERVICE=NAME and BUS_EXIT_WITH_PARENT=PID (the kernel and Swift services stop
        themselves if this process dies without stopping them) in its environment. NAME must
        be the service name it registers.
        Example: --service echo=/path/BusTestService --service-args 'echo=--name echo'

        Every line a process prints is shown as '[NAME] line' (padded and coloured on a
        terminal; NO_COLOR turns colour off). A process that exits is restarted after 0.5 s,
        doubling up to 30 s, back to 0.5 s once it stayed up 60 s; each restart is one
        '[supervisor]' line. SIGINT, SIGTERM or SIGHUP stops the services in reverse order (SIGTERM,
        then SIGKILL after --stop-timeout), then the kernel, and exits 0; a second signal kills
        everything at once (exit 1).

        The supervisor is on the bus as the service 'supervisor': methods status,
        restart {"service"} and replace {"service","binary","timeout_ms"} (see 'busctl restart'
        and 'busctl replace'). Exit status: 0 after a clean stop, 1 when the kernel cannot
        start (e.g. its port is in use), 64 for bad arguments, 78 when keys are unusable.

        With --secure (or --keys DIR) every process runs with CURVE and the kernel's ZAP
        handler: the key pairs of the kernel, the supervisor, busctl and every service are made
        in STATE/keys (0700; secret files 0600) on first run and admitted in
        STATE/keys/authorized; the folder is printed. Use it with other busctl commands:
        BUS_KEYS=STATE/keys busctl services.
        """

    /// The package's services, in start order: (service name, executable name).
    static let packageServices: [(name: String, executable: String)] = [
        ("persist", "PersistService"),
        ("auth", "AuthService"),
        ("feed", "FeedService"),
        ("weather", "WeatherService"),
        ("events", "EventService"),
    ]

    /// Arguments a package service gets before its --service-args (a later value of the same
    /// option wins): `auth` hands the access token to `feed` and nobody else; `events` imports
    /// the sample calendar on its first start (it skips it when it restores saved events).
    static let defaultArguments: [String: [String]] = ["auth": ["--token-callers", "feed"], "events": ["--import-sample"]]

    /// A service to run, as the command line asked for it.
    struct Selected: Sendable {
        var name: String
        /// Nil for a package service: its executable is looked up in the bin folder.
        var path: String?
        var arguments: [String] = []
    }

    var endpoints: Endpoints
    var level: Logger.Level
    var levelName: String
    var selected: [Selected]
    var stateDirectory: URL
    var binDirectory: URL?
    var registerTimeout: Duration
    var stopTimeout: Duration
    /// The keys folder when security is on (--secure: STATE/keys; --keys: as given).
    var keys: URL?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        endpoints = try arguments.endpoints()
        level = try arguments.logLevel()
        levelName = level.name
        registerTimeout = try Self.positiveSeconds(arguments, "register-timeout") ?? .seconds(10)
        stopTimeout = try Self.positiveSeconds(arguments, "stop-timeout") ?? .seconds(3)
        stateDirectory = arguments.value("state-dir").map { URL(fileURLWithPath: $0) } ?? ServiceContext.defaultDataDirectory()
        if let keys = arguments.value("keys") {
            self.keys = URL(fileURLWithPath: keys)
        } else if arguments.flag("secure") {
            keys = stateDirectory.appendingPathComponent("keys")
        }
        binDirectory = arguments.value("bin-dir").map { URL(fileURLWithPath: $0) }

        var services = Self.packageServices.map { Selected(name: $0.name, arguments: Self.defaultArguments[$0.name] ?? []) }
        for entry in arguments.all("service") {
            let (name, path) = try Self.split(entry, option: "service", what: "NAME=PATH")
            guard !path.isEmpty else { throw UsageError("--service \(entry): PATH is empty") }
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            guard FileManager.default.isExecutableFile(atPath: absolute) else {
                throw UsageError("--service \(entry): no executable file at \(absolute)")
            }
            if let index = services.firstIndex(where: { $0.name == name }) {
                guard services[index].path == nil else { throw UsageError("--service \(name) is given twice") }
                services[index].path = absolute
            } else {
                services.append(Selected(name: name, path: absolute))
            }
        }
        for entry in arguments.all("service-args") {
            let (name, text) = try Self.split(entry, option: "service-args", what: "NAME=ARGS")
            guard let index = services.firstIndex(where: { $0.name == name }) else {
                throw UsageError("--service-args \(entry): no service '\(name)' (known: \(services.map(\.name).joined(separator: ", ")))")
            }
            services[index].arguments += try ShellWords.split(text)
        }
        if let only = arguments.value("only") {
            let names = only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !names.isEmpty else { throw UsageError("--only needs at least one service name") }
            for name in names where !services.contains(where: { $0.name == name }) {
                throw UsageError("--only: no service '\(name)' (known: \(services.map(\.name).joined(separator: ", ")))")
            }
            services = services.filter { names.contains($0.name) }
        }
        selected = services
    }

    /// `NAME=VALUE` with a valid service name.
    static func split(_ entry: String, option: String, what: String) throws(UsageError) -> (String, String) {
        guard let equals = entry.firstIndex(of: "=") else { throw UsageError("--\(option) expects \(what), got '\(entry)'") }
        let name = String(entry[..<equals])
        let value = String(entry[entry.index(after: equals)...])
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw UsageError("--\(option) \(entry): the service name must be lowercase letters, digits, '-' or '_'")
        }
        guard !["kernel", "supervisor", "bus", "mmi"].contains(name) else {
            throw UsageError("--\(option) \(entry): '\(name)' is reserved")
        }
        return (name, value)
    }

    static func positiveSeconds(_ arguments: ParsedArguments, _ name: String) throws(UsageError) -> Duration? {
        guard let value = try arguments.double(name) else { return nil }
        guard value > 0 else { throw UsageError("--\(name) must be above 0, got '\(arguments.value(name) ?? "")'") }
        return .milliseconds(Int64(value * 1000))
    }

    func run() async throws -> Int32 {
        let busctl = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let binDirectory = self.binDirectory ?? URL(fileURLWithPath: busctl).deletingLastPathComponent()

        var runnable: [Selected] = []
        var notBuilt: [(String, String)] = []
        for var service in selected {
            if service.path == nil, let executable = Self.packageServices.first(where: { $0.name == service.name })?.executable {
                let path = binDirectory.appendingPathComponent(executable).path
                guard FileManager.default.isExecutableFile(atPath: path) else {
                    notBuilt.append(
                        (service.name, "not built: no \(executable) in \(binDirectory.path); skipped (swift build --product \(executable))"))
                    continue
                }
                service.path = path
            }
            runnable.append(service)
        }

        do {
            try Self.makePrivateDirectory(stateDirectory)
            for service in runnable { try Self.makePrivateDirectory(stateDirectory.appendingPathComponent(service.name)) }
        } catch {
            throw CommandFailure("cannot create the state directory \(stateDirectory.path): \(error.localizedDescription)")
        }

        var common = [
            "--kernel", endpoints.requests, "--events-in", endpoints.eventsIn, "--events-out", endpoints.eventsOut,
            "--log-level", levelName,
        ]
        var security: ClientSecurity?
        if let keys {
            do {
                let made = try Self.prepareKeys(keys, identities: ["supervisor", "busctl"] + runnable.map(\.name))
                security = try ClientSecurity.load(keys: keys, identity: "supervisor")
                let note = made.isEmpty ? "" : " (made: \(made.joined(separator: ", ")))"
                FileHandle.standardOutput.write(
                    Data("[supervisor] security on: CURVE keys in \(keys.path)\(note); other busctl commands: BUS_KEYS=\(keys.path)\n".utf8))
            } catch {
                throw CommandFailure("security: \(error)", code: ExitCode.configError)
            }
            common += ["--keys", keys.path]
        }
        // Children stop themselves if this process dies without stopping them (SIGKILL).
        let watch = ["BUS_EXIT_WITH_PARENT": String(getpid())]
        let kernel = ProgramSpec(name: "kernel", executable: busctl, arguments: ["kernel"] + common, environment: watch)
        let specs = runnable.map { service in
            let state = stateDirectory.appendingPathComponent(service.name).path
            return ProgramSpec(
                name: service.name, executable: service.path!, arguments: common + ["--state-dir", state] + service.arguments,
                environment: [
                    "BUS_KERNEL": endpoints.requests, "BUS_EVENTS_IN": endpoints.eventsIn, "BUS_EVENTS_OUT": endpoints.eventsOut,
                    "BUS_LOG_LEVEL": levelName, "BUS_STATE_DIR": state, "BUS_SERVICE": service.name,
                ].merging(keys.map { ["BUS_KEYS": $0.path] } ?? [:]) { a, _ in a }.merging(watch) { a, _ in a })
        }

        let allNames = ["kernel"] + selected.map(\.name)
        let printer = LogPrinter(names: ["kernel"] + specs.map(\.name))
        let width = allNames.map(\.count).max() ?? 0
        signal(SIGPIPE, SIG_IGN)
        // Children are reaped with waitpid; an inherited SIG_IGN would make the kernel reap them.
        signal(SIGCHLD, SIG_DFL)
        let signals = SignalWatcher([SIGTERM, SIGINT, SIGHUP])
        for (name, text) in notBuilt {
            printer.supervisor(name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + text)
        }

        var options = BusOptions(endpoints: endpoints, name: SupervisorAPI.service)
        options.logger = Logger(label: "supervisor", level: max(level, .warning))
        options.security = security
        let bus = BusClient(options: options)
        var settings = Supervisor.Settings(endpoints: endpoints)
        settings.registerTimeout = registerTimeout
        settings.stopTimeout = stopTimeout
        settings.nameWidth = width
        let supervisor = Supervisor(kernel: kernel, services: specs, settings: settings, printer: printer, bus: bus)
        return await Self.supervise(supervisor, bus: bus, signals: signals, printer: printer, notBuilt: notBuilt.count)
    }

    /// Makes the kernel's key pair and every identity's that is missing, admits each identity
    /// (authorized/NAME.key), and returns the names it made.
    static func prepareKeys(_ keys: URL, identities: [String]) throws -> [String] {
        try makePrivateDirectory(keys)
        let authorized = keys.appendingPathComponent("authorized")
        try FileManager.default.createDirectory(at: authorized, withIntermediateDirectories: true)
        var made: [String] = []
        for identity in ["kernel"] + identities {
            let secret = keys.appendingPathComponent("\(identity).key_secret")
            if !FileManager.default.fileExists(atPath: secret.path) {
                try CurveKeyPair.generate().write(name: identity, to: keys)
                made.append(identity)
            }
            guard identity != "kernel" else { continue }
            let admitted = authorized.appendingPathComponent("\(identity).key")
            if !FileManager.default.fileExists(atPath: admitted.path) {
                let pair = try CurveKeyPair.load(secret)
                try CurveKeyPair(publicKey: pair.publicKey, secretKey: nil).write(name: identity, to: authorized)
            }
        }
        return made
    }

    private enum Event: Sendable {
        case started
        case failed(String)
        case signal(Int32)
        case stopped
    }

    /// Starts everything, then waits for a signal and stops everything in order.
    private static func supervise(
        _ supervisor: Supervisor, bus: BusClient, signals: sending SignalWatcher,
        printer: LogPrinter, notBuilt: Int
    ) async -> Int32 {
        let (events, continuation) = AsyncStream<Event>.makeStream()
        let signalTask = Task {
            while !Task.isCancelled { continuation.yield(.signal(await signals.next())) }
        }
        defer { signalTask.cancel() }
        let startup = Task {
            do {
                try await supervisor.startKernel()
                try await supervisor.serveOnBus()
                await supervisor.startServices()
                continuation.yield(.started)
            } catch let failure as CommandFailure {
                continuation.yield(.failed(failure.message))
            } catch {
                continuation.yield(.failed("cannot serve the supervisor on the bus: \(error)"))
            }
        }
        @Sendable func stopAll() async {
            await supervisor.beginShutdown()
            await supervisor.leaveBus()
            await startup.value
            await supervisor.stopServices()
            await bus.close()
            await supervisor.stopKernel()
        }
        var shutdown: Task<Void, Never>?
        for await event in events {
            switch event {
            case .started:
                guard shutdown == nil else { continue }
                let total = await supervisor.serviceNames.count
                let up = await supervisor.servicesUp
                let skipped = notBuilt > 0 ? " (\(notBuilt) not built)" : ""
                printer.supervisor(
                    "\(up) of \(total) services up\(skipped); serving 'supervisor' at \(bus.options.endpoints.requests); SIGINT or SIGTERM stops everything"
                )
            case .failed(let message):
                guard shutdown == nil else { continue }
                await stopAll()
                printer.error(message)
                return ExitCode.failure
            case .signal(let number):
                let name = ProcessExit.signalName(number)
                if shutdown == nil {
                    printer.supervisor("received \(name); stopping the services in reverse order, then the kernel")
                    shutdown = Task {
                        await stopAll()
                        continuation.yield(.stopped)
                    }
                } else {
                    printer.supervisor("received \(name) again; killing every process")
                    await supervisor.killAll()
                    return ExitCode.failure
                }
            case .stopped:
                printer.supervisor("all stopped")
                return ExitCode.ok
            }
        }
        return ExitCode.ok
    }

    /// Creates `url` (and its parents) with mode 0700 when it does not exist.
    static func makePrivateDirectory(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
}
