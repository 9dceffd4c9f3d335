// persist: stores every retained event (the state of every service) in SQLite and serves it
// back (`restore`, `history`, `stats`, `compact`). See docs/PERSISTENCE.md.
import Bus
import Foundation
import PersistCore

let persistOptions: [OptionSpec] = [
    OptionSpec(
        "retention", value: "SPEC",
        help: "History kept per topic prefix: PREFIX=AGE:COUNT,... (AGE like 7d, 12h; '-' for no limit; '*' for every topic).",
        environment: "PERSIST_RETENTION", default: "*=30d:10000"),
    OptionSpec(
        "synchronous", value: "MODE", help: "full: every commit is fsynced (survives power loss); normal: survives a crash of the process only.",
        default: "full"),
    OptionSpec("check", value: "LEVEL", help: "Database check at start: full (integrity_check and every checksum), quick, or none.", default: "full"),
    OptionSpec(
        "on-corrupt", value: "ACTION",
        help: "A database that fails the check: quarantine (move aside, start from the kernel's retained values) or refuse (exit 1).",
        default: "quarantine"),
    OptionSpec("max-db-mb", value: "MB", help: "Cap on the database file; past it writes fail (disk_full) until retention frees space."),
    OptionSpec("compact-every", value: "S", help: "Apply retention every S seconds (0: only on request and when full).", default: "3600"),
    OptionSpec("queue", value: "N", help: "Events queued for the writer before ingestion waits.", default: "50000"),
    OptionSpec("max-batch", value: "N", help: "Most events committed in one transaction.", default: "5000"),
    OptionSpec("bench", help: "Run the benchmark (in-process kernel, raw SQLite baseline) instead of the service, then exit."),
    OptionSpec("seconds", value: "S", help: "With --bench: seconds per phase.", default: "3"),
    OptionSpec("window", value: "N", help: "With --bench: most events unacknowledged at once (a closed loop).", default: "1000"),
    OptionSpec("json", help: "With --bench: print the result as JSON."),
]

/// `--bench [--seconds S] [--json]`: runs before (and instead of) the service.
func runBenchmark(_ arguments: [String]) async -> Never {
    do {
        let parsed = try parseArguments(arguments, options: OptionSpec.common + persistOptions, maxPositionals: 0)
        var options = PersistBenchmark.Options()
        if let seconds = try parsed.double("seconds") {
            guard seconds > 0 else { throw UsageError("--seconds must be above 0") }
            options.seconds = seconds
        }
        if let window = try parsed.int("window") {
            guard window >= 1 else { throw UsageError("--window must be at least 1") }
            options.window = window
        }
        if let mode = parsed.value("synchronous") {
            guard let durability = Durability(rawValue: mode) else { throw UsageError("--synchronous is full or normal, not '\(mode)'") }
            options.durability = durability
        }
        if let dir = parsed.value("state-dir") { options.directory = URL(fileURLWithPath: dir) }
        let result = try await PersistBenchmark.run(options)
        print(parsed.flag("json") ? result.json : result.text, terminator: "")
        exit(0)
    } catch let error as UsageError {
        FileHandle.standardError.write(
            Data("error: \(error.message)\nusage: PersistService --bench [--seconds S] [--window N] [--synchronous full|normal] [--json]\n".utf8))
        exit(64)
    } catch {
        FileHandle.standardError.write(Data("error: benchmark failed: \(error)\n".utf8))
        exit(1)
    }
}

/// The engine settings from the command line; a bad value is a usage error (exit 64).
func engineConfiguration(_ arguments: ParsedArguments, path: String) throws(UsageError) -> PersistEngine.Configuration {
    var config = PersistEngine.Configuration(path: path)
    do {
        config.retention = try RetentionPolicy(parsing: arguments.value("retention") ?? "*=30d:10000")
    } catch {
        throw UsageError("--retention: \(error.description)")
    }
    let mode = arguments.value("synchronous") ?? "full"
    guard let durability = Durability(rawValue: mode) else { throw UsageError("--synchronous is full or normal, not '\(mode)'") }
    config.durability = durability
    let check = arguments.value("check") ?? "full"
    guard let level = IntegrityCheckLevel(rawValue: check) else { throw UsageError("--check is full, quick or none, not '\(check)'") }
    config.check = level
    let action = arguments.value("on-corrupt") ?? "quarantine"
    guard let policy = CorruptionPolicy(rawValue: action) else { throw UsageError("--on-corrupt is quarantine or refuse, not '\(action)'") }
    config.onCorrupt = policy
    if let mb = try arguments.int("max-db-mb") {
        guard mb >= 1 else { throw UsageError("--max-db-mb must be at least 1") }
        config.maxDatabaseBytes = mb * 1_048_576
    }
    if let n = try arguments.int("queue") { config.queueCapacity = max(1, n) }
    if let n = try arguments.int("max-batch") { config.maxBatch = max(1, n) }
    return config
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--bench") { await runBenchmark(arguments) }

await ServiceMain.run(
    name: "persist",
    overview: "Stores every retained event in SQLite (history and latest snapshot per topic) and serves restore, history, stats, compact.",
    options: persistOptions
) { context in
    // Bad options are UsageErrors (ServiceMain: exit 64); a state directory that cannot be
    // made is a ConfigurationError (exit 78).
    let directory: URL
    do {
        directory = try context.stateDirectory()
    } catch {
        throw ConfigurationError("cannot create the state directory (--state-dir): \(error)")
    }
    let config = try engineConfiguration(context.arguments, path: directory.appendingPathComponent("persist.sqlite").path)
    var serverOptions = PersistServer.Options()
    let every = try context.arguments.int("compact-every") ?? 3600
    serverOptions.compactEvery = every > 0 ? .seconds(every) : nil
    context.logger.info(
        "opening \(config.path)",
        metadata: [
            "check": config.check.rawValue, "synchronous": config.durability.rawValue, "retention": config.retention.description,
        ])
    let engine: PersistEngine
    do throws(PersistError) {
        engine = try await PersistEngine.open(config)
    } catch {
        if case .corruptDatabase = error {
            context.logger.error(
                "refusing to start: \(error.description); move the file aside or run with --on-corrupt quarantine to start from the kernel's retained values"
            )
        }
        throw error
    }
    let server = PersistServer(bus: context.bus, engine: engine, options: serverOptions, logger: context.logger)
    context.onShutdown { await server.stop() }
    try server.start()
    return [server.makeService()]
}
