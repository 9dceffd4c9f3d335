import Bus
import BusTestSupport
import Foundation

// `BusChaos`: the seeded fault run over the whole bus (docs/RELIABILITY.md). `scripts/chaos`
// builds and runs it.
signal(SIGPIPE, SIG_IGN)

var options: ChaosOptions
do {
    options = try ChaosOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    if let message = error.message {
        FileHandle.standardError.write(Data("BusChaos: \(message)\n\(ChaosOptions.usage)\n".utf8))
        exit(64)
    }
    print(ChaosOptions.usage)
    exit(0)
}

let json = options.json
let log: @Sendable (String) -> Void = { line in
    // Unbuffered: progress shows as it happens, also through a pipe.
    (json ? FileHandle.standardError : FileHandle.standardOutput).write(Data((line + "\n").utf8))
}

if options.planOnly {
    let plan = FaultPlan.make(seed: options.seed, durationMs: History.ms(options.duration), network: options.net, interval: options.faultInterval)
    for step in plan {
        print("\(FaultStep.seconds(step.atMs))  " + step.faults.map(\.label).joined(separator: " + "))
    }
    exit(0)
}

// As root, the run happens in a process of its own inside its namespaces (Sandbox); this one
// waits for it and removes the network namespaces on every way out.
if Sandbox.isInside {
    ParentWatch.startIfAsked(logger: Logger(label: "chaos", level: .warning))
} else {
    let missing = await Sandbox.unavailableReason()
    if options.net {
        if let reason = missing ?? NetworkNamespaces.unavailableReason {
            FileHandle.standardError.write(Data("BusChaos: --net cannot run here: \(reason)\n".utf8))
            exit(70)
        }
    }
    if let missing {
        options.sandboxMissing = missing
    } else {
        var namespaces: NetworkNamespaces?
        if options.net {
            do {
                namespaces = try await NetworkNamespaces.create(hosts: 2)
            } catch {
                FileHandle.standardError.write(Data("BusChaos: --net: cannot make the network namespaces: \(error)\n".utf8))
                exit(70)
            }
        }
        let status: Int32
        do {
            status = try Sandbox.runInside(arguments: Array(CommandLine.arguments.dropFirst()), namespaces: namespaces)
        } catch {
            FileHandle.standardError.write(Data("BusChaos: cannot start the run in its namespaces: \(error)\n".utf8))
            status = 70
        }
        await namespaces?.remove()
        exit(status)
    }
}

// Interrupted (Ctrl-C, a test's deadline): no process of the run outlives it.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let interruptions = [SIGINT, SIGTERM].map { number in
    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
    source.setEventHandler {
        ChildProcess.killAll()
        exit(130)
    }
    source.resume()
    return source
}

do {
    let summary = try await ChaosRun(options: options, log: log).run()
    if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(summary), as: UTF8.self))
    } else {
        print("")
        print(summary.table)
    }
    withExtendedLifetime(interruptions) {}
    exit(summary.passed ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("BusChaos: \(error)\n".utf8))
    exit(70)
}
