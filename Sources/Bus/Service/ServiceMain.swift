import BusSupport
import Foundation

/// What a service executable's setup closure gets.
public struct ServiceContext: Sendable {
    /// The connection to the kernel.
    public let bus: BusClient
    /// The parsed command line (common options plus the service's own).
    public let arguments: ParsedArguments
    public let logger: Logger
    let shutdownHooks = ShutdownHooks()
    let drainDeadlineHooks = ShutdownHooks()

    /// Registers work to run on SIGTERM/SIGINT after the services drained and before the bus
    /// connection closes (flush a write queue, close a database); run in reverse order of
    /// registration, also when `setup` fails after registering.
    public func onShutdown(_ action: @escaping @Sendable () async -> Void) {
        shutdownHooks.add(action)
    }

    /// Registers work to run on SIGTERM/SIGINT when the drain is about to run out of time
    /// (``ServiceMain/drainTimeout`` less ``ServiceMain/drainAnswerMargin``) and requests are
    /// still in flight, while the workers can still send replies: answer what would otherwise
    /// be cut off (a kit store answers its waiting requests with 503 `interrupted`). Does not
    /// run when the drain finishes first.
    public func onDrainDeadline(_ action: @escaping @Sendable () async -> Void) {
        drainDeadlineHooks.add(action)
    }

    /// `--state-dir` (env `BUS_STATE_DIR`), default `$XDG_DATA_HOME/swiftbus/<name>` or
    /// `~/.local/share/swiftbus/<name>`; created on first use with mode 0700.
    public func stateDirectory() throws -> URL {
        let url: URL
        if let dir = arguments.value("state-dir") {
            url = URL(fileURLWithPath: dir)
        } else {
            url = ServiceContext.defaultDataDirectory().appendingPathComponent(bus.name)
        }
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }

    /// `$XDG_DATA_HOME/swiftbus` or `~/.local/share/swiftbus`.
    public static func defaultDataDirectory() -> URL {
        let env = ProcessInfo.processInfo.environment
        if let xdg = env["XDG_DATA_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("swiftbus")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/swiftbus")
    }
}

/// The `main` of a service executable: parses the common options (exit 64 on bad ones),
/// connects, serves the services `setup` returns, and on SIGTERM or SIGINT leaves gracefully:
/// DISCONNECT to the kernel, in-flight requests finished, sockets closed, exit 0 within 2 s.
public enum ServiceMain {
    /// How long a stopping process waits for its in-flight requests.
    public static let drainTimeout: Duration = .milliseconds(1500)
    /// How long before ``drainTimeout`` the drain-deadline hooks run, so their answers still
    /// reach the kernel.
    public static let drainAnswerMargin: Duration = .milliseconds(300)

    /// Runs a service process until a signal; never returns.
    ///
    /// - Parameters:
    ///   - name: the service name (also the event source name).
    ///   - overview: one line for `--help`.
    ///   - options: the service's own options, after the common ones.
    ///   - setup: builds the services to serve (and starts whatever else the process runs).
    ///     It fails by throwing: a ``UsageError`` exits 64 and a ``ConfigurationError`` 78, each
    ///     with one line on standard error; any other error is logged and exits 1.
    public static func run(
        name: String, overview: String, options: [OptionSpec] = [],
        arguments: [String] = Array(CommandLine.arguments.dropFirst()),
        setup: @escaping @Sendable (ServiceContext) async throws -> [BusService]
    ) async -> Never {
        let specs =
            OptionSpec.common + [
                OptionSpec("instance", value: "ID", help: "Instance id reported to the kernel (default: name-host-pid-random)."),
                OptionSpec("concurrency", value: "N", help: "Requests handled at once (default: the service's own)."),
                OptionSpec("state-dir", value: "DIR", help: "Where the service keeps its data.", environment: "BUS_STATE_DIR"),
            ] + options
        let parsed: ParsedArguments
        let busOptions: BusOptions
        do {
            parsed = try parseArguments(arguments, options: specs, maxPositionals: 0)
            if parsed.flag("help") {
                print(helpText(command: name, overview: overview, usage: "[options]", options: specs), terminator: "")
                exit(0)
            }
            busOptions = try parsed.busOptions(name: name)
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("error: \(error.message)\nusage: \(name) [options] (see --help)\n".utf8))
            exit(64)
        } catch {
            // Security set-up problems (missing or world-readable keys): EX_CONFIG.
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(78)
        }
        let endpoints = busOptions.endpoints
        let logger = busOptions.logger
        let bus = BusClient(options: busOptions)
        let signals = SignalWatcher([SIGTERM, SIGINT])
        ParentWatch.startIfAsked(logger: logger)
        let handles: [ServiceHandle]
        let context = ServiceContext(bus: bus, arguments: parsed, logger: logger)
        do {
            let services = try await setup(context)
            var started: [ServiceHandle] = []
            for service in services { started.append(try bus.serve(service)) }
            handles = started
        } catch {
            // Setup fails by throwing; only this decides the exit code.
            let code: Int32
            switch error {
            case let usage as UsageError:
                FileHandle.standardError.write(Data("error: \(usage.message)\nusage: \(name) [options] (see --help)\n".utf8))
                code = 64
            case let configuration as ConfigurationError:
                FileHandle.standardError.write(Data("error: \(configuration.message)\n".utf8))
                code = 78
            default:
                logger.error("could not start: \(error)")
                code = 1
            }
            await context.shutdownHooks.run()
            await bus.close()
            exit(code)
        }
        logger.info("\(name) running", metadata: ["instance": bus.instance, "kernel": endpoints.requests])
        let signal = await signals.next()
        logger.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"); draining")
        if !handles.isEmpty { await drain(handles, context: context) }
        await context.shutdownHooks.run()
        await bus.close()
        logger.info("\(name) stopped")
        exit(0)
    }

    /// Drains every service at once; if requests are still in flight shortly before
    /// ``drainTimeout``, runs the drain-deadline hooks so they are answered in time.
    private static func drain(_ handles: [ServiceHandle], context: ServiceContext) async {
        await withTaskGroup(of: Bool.self) { group in
            for handle in handles.reversed() {
                group.addTask {
                    await handle.drain(timeout: drainTimeout)
                    return true
                }
            }
            group.addTask {
                do {
                    try await Task.sleep(for: drainTimeout - drainAnswerMargin)
                } catch {
                    return false
                }
                await context.drainDeadlineHooks.run()
                return false
            }
            var drained = 0
            for await isDrain in group where isDrain {
                drained += 1
                if drained == handles.count { break }
            }
            group.cancelAll()
        }
    }
}

/// Turns POSIX signals into an async wait, through Dispatch signal sources (the handler runs
/// on a Dispatch queue, never inside the signal handler). Owned by one task.
public final class SignalWatcher {
    private let stream: AsyncStream<Int32>
    private let sources: [DispatchSourceSignal]

    public init(_ signals: [Int32]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        var sources: [DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        self.stream = stream
        self.sources = sources
    }

    /// Waits for the next signal.
    public func next() async -> Int32 {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next() ?? SIGTERM
    }
}
