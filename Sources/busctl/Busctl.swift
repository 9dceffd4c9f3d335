import Bus
import BusSupport
import BusZMQ
import Foundation

/// busctl's exit statuses (documented in the README and in `busctl --help`).
enum ExitCode {
    static let ok: Int32 = 0
    /// Something failed that has no code of its own.
    static let failure: Int32 = 1
    /// The service answered with an error status (4xx/5xx).
    static let errorReply: Int32 = 2
    /// No reply before the timeout.
    static let timeout: Int32 = 3
    /// No such service: no worker registered in time (503 no_such_service).
    static let noSuchService: Int32 = 4
    /// The kernel could not be reached.
    static let unreachable: Int32 = 5
    /// `monitor`: the last events of a retained topic were never shown (lost, or not read in
    /// time).
    static let lostTail: Int32 = 6
    /// Bad command line (sysexits EX_USAGE).
    static let usage: Int32 = 64
    /// Bad input data, e.g. invalid JSON (sysexits EX_DATAERR).
    static let dataError: Int32 = 65
    /// Unusable configuration, e.g. security keys missing or readable by others (EX_CONFIG).
    static let configError: Int32 = 78
}

/// A busctl subcommand: parsed in `init` (usage errors), validated, then run.
protocol BusctlCommand: Sendable {
    static var name: String { get }
    static var aliases: [String] { get }
    static var overview: String { get }
    static var usage: String { get }
    static var options: [OptionSpec] { get }
    static var maxPositionals: Int? { get }
    static var discussion: String? { get }
    init(_ arguments: ParsedArguments) throws(UsageError)
    func run() async throws -> Int32
}

extension BusctlCommand {
    static var aliases: [String] { [] }
    static var maxPositionals: Int? { 0 }
    static var discussion: String? { nil }
    static var help: String {
        helpText(command: "busctl \(name)", overview: overview, usage: usage, options: options, discussion: discussion)
    }
}

/// A failure a command reports as one line and an exit status.
struct CommandFailure: Error {
    let message: String
    let code: Int32
    init(_ message: String, code: Int32 = ExitCode.failure) {
        self.message = message
        self.code = code
    }
}

@main
struct Busctl {
    static let commands: [any BusctlCommand.Type] = [
        KernelCommand.self,
        ServicesCommand.self,
        CallCommand.self,
        GetCommand.self,
        PubCommand.self,
        MonitorCommand.self,
        WaitCommand.self,
        StatsCommand.self,
        GraphCommand.self,
        RecordCommand.self,
        ReplayCommand.self,
        KeygenCommand.self,
        BenchCommand.self,
        UpCommand.self,
        RestartCommand.self,
        ReplaceCommand.self,
        HistoryCommand.self,
        RestoreCommand.self,
    ]

    static var overview: String {
        helpText(
            command: "busctl", overview: "Observe, drive and run a swiftbus message bus.",
            usage: "<subcommand> [options]", options: [],
            subcommands: commands.map { ($0.name + ($0.aliases.isEmpty ? "" : " (\($0.aliases.joined(separator: ", ")))"), $0.overview) },
            discussion: """
                Every subcommand takes --kernel URL (env BUS_KERNEL, default \(Endpoints.defaultKernel)).
                Those that talk to a kernel also take --connect-timeout S (env BUSCTL_CONNECT_TIMEOUT,
                default 2): a kernel that does not answer bus.ping within it is exit 5 at once.
                Reading commands take --json (one object per line for streams).
                Exit status: 0 ok, 1 failure, 2 error reply, 3 timeout, 4 no such service,
                5 kernel unreachable, 64 bad arguments, 65 bad input data, 78 bad configuration.
                See 'busctl <subcommand> --help'.
                """)
    }

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let first = arguments.first, first != "--help", first != "-h", first != "help" else {
            print(overview, terminator: "")
            exit(arguments.isEmpty ? ExitCode.usage : ExitCode.ok)
        }
        if first == "--version" {
            print("busctl \(BusVersion.current) (protocol \(BusVersion.protocolVersion), libzmq \(ZMQContext.version))")
            exit(ExitCode.ok)
        }
        guard let type = commands.first(where: { $0.name == first || $0.aliases.contains(first) }) else {
            fail("unknown subcommand '\(first)'", usage: "busctl <subcommand> [options] (see busctl --help)", code: ExitCode.usage)
        }
        let command: any BusctlCommand
        let level: Logger.Level
        do throws(UsageError) {
            let parsed = try parseArguments(Array(arguments.dropFirst()), options: type.options, maxPositionals: type.maxPositionals)
            if parsed.flag("help") {
                print(type.help, terminator: "")
                exit(ExitCode.ok)
            }
            command = try type.init(parsed)
            level = try parsed.logLevel()
        } catch {
            fail(error.message, usage: "busctl \(type.name) \(type.usage) (see busctl \(type.name) --help)", code: ExitCode.usage)
        }
        // BUS_EXIT_WITH_PARENT for every command: those that stop gracefully on SIGTERM (kernel,
        // up) do so, the default action ends the rest.
        ParentWatch.startIfAsked(logger: Logger(label: "busctl", level: level))
        do {
            exit(try await command.run())
        } catch let failure as CommandFailure {
            fail(failure.message, code: failure.code)
        } catch let error as UsageError {
            fail(error.message, usage: "busctl \(type.name) \(type.usage)", code: ExitCode.usage)
        } catch let error as BusError {
            fail(error.description, code: exitCode(for: error))
        } catch {
            fail("\(error)", code: ExitCode.failure)
        }
    }

    static func exitCode(for error: BusError) -> Int32 {
        switch error {
        case .timeout: return ExitCode.timeout
        case .unreachable: return ExitCode.unreachable
        case .reply(let status, let code, _):
            return status == 503 && code == "no_such_service" ? ExitCode.noSuchService : ExitCode.errorReply
        case .usage, .invalidTopic: return ExitCode.usage
        case .invalidPayload: return ExitCode.dataError
        default: return ExitCode.failure
        }
    }

    static func fail(_ message: String, usage: String? = nil, code: Int32) -> Never {
        var text = "error: \(message)\n"
        if let usage { text += "usage: \(usage)\n" }
        FileHandle.standardError.write(Data(text.utf8))
        exit(code)
    }
}
