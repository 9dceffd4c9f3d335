import Foundation

/// The command line of `BusChaos` (see `usage`).
struct ChaosOptions: Sendable {
    var seed: UInt64 = 1
    /// How long the clients work under faults.
    var duration: Duration = .seconds(180)
    var json = false
    /// Where the package's executables are (busctl, the services).
    var binDirectory: URL
    /// The package root: Tests/interop servers and their fixtures.
    var root: URL
    /// Where state, logs and the history go (default: a new temporary folder, kept).
    var workDirectory: URL?
    /// CURVE on every connection, keys made for the run.
    var secure = false
    /// Extra time a call may take past its deadline before it counts as late.
    var lateSlack: Duration = .seconds(1)
    /// Print the schedule and exit.
    var planOnly = false
    /// Network faults: the kernel in a network namespace of its own, its link cut and slowed.
    var net = false
    /// The size of persist's own filesystem (the `disk-full` fault fills it).
    var persistFilesystemMB = 256
    /// A fault step every `faultInterval` (a range, drawn from the seed).
    var faultInterval: ClosedRange<Int> = 6_000...12_000
    /// How often the resources of every process are sampled.
    var sampleEvery: Duration = .seconds(5)
    /// Set when the run has no mount namespace of its own: why (disk-full faults are skipped).
    var sandboxMissing: String?

    static let usage = """
        usage: BusChaos --seed N (--minutes M | --seconds S) [--json] [--secure] [--net] [--bin-dir DIR] [--root DIR]
                        [--work-dir DIR] [--late-slack-ms MS] [--fault-interval MIN-MAX] [--persist-fs-mb MB]
                        [--sample-every S] [--plan]

        Starts the kernel, persist, auth, feed, weather and events as separate processes on free
        loopback ports (upstreams: the local servers in Tests/interop), runs clients that follow
        and unfollow cities, like and RSVP events, sign in and out and vote while a seeded
        nemesis kills, pauses and stops processes; then crashes the whole stack, starts it again
        and checks that every acknowledged write is there. As root, persist's data directory is a
        small tmpfs of the run's own that the nemesis fills (disk-full); with --net the kernel runs
        in a network namespace whose link the nemesis cuts and slows. --fault-interval (seconds,
        default 6-12) spaces the fault steps; the resources of every process are sampled every
        --sample-every seconds (default 5) into resources.jsonl. Exit status: 0 when every check
        passed, 1 when one failed, 64 for bad arguments, 70 when the stack could not start.
        """

    static func parse(_ arguments: [String]) throws(ChaosUsageError) -> ChaosOptions {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var options = ChaosOptions(
            binDirectory: exe.deletingLastPathComponent(), root: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        var seedGiven = false
        var index = 0
        func value(_ name: String) throws(ChaosUsageError) -> String {
            index += 1
            guard index < arguments.count else { throw ChaosUsageError("\(name) needs a value") }
            return arguments[index]
        }
        func number(_ name: String) throws(ChaosUsageError) -> Double {
            let text = try value(name)
            guard let number = Double(text), number > 0, number.isFinite else {
                throw ChaosUsageError("\(name) expects a positive number, got '\(text)'")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--seed":
                let text = try value(argument)
                guard let seed = UInt64(text) else { throw ChaosUsageError("--seed expects an unsigned integer, got '\(text)'") }
                options.seed = seed
                seedGiven = true
            case "--minutes": options.duration = .milliseconds(Int64(try number(argument) * 60_000))
            case "--seconds": options.duration = .milliseconds(Int64(try number(argument) * 1000))
            case "--json": options.json = true
            case "--secure": options.secure = true
            case "--plan": options.planOnly = true
            case "--bin-dir": options.binDirectory = URL(fileURLWithPath: try value(argument))
            case "--root": options.root = URL(fileURLWithPath: try value(argument))
            case "--work-dir": options.workDirectory = URL(fileURLWithPath: try value(argument))
            case "--late-slack-ms": options.lateSlack = .milliseconds(Int64(try number(argument)))
            case "--net": options.net = true
            case "--persist-fs-mb":
                let mb = try number(argument)
                guard mb >= 16 else { throw ChaosUsageError("--persist-fs-mb must be at least 16") }
                options.persistFilesystemMB = Int(mb)
            case "--sample-every": options.sampleEvery = .milliseconds(Int64(try number(argument) * 1000))
            case "--fault-interval":
                let text = try value(argument)
                let bounds = text.split(separator: "-").compactMap { Double($0) }
                guard bounds.count == 2, bounds[0] >= 1, bounds[1] >= bounds[0] else {
                    throw ChaosUsageError("--fault-interval expects MIN-MAX seconds (e.g. 6-12), got '\(text)'")
                }
                options.faultInterval = Int(bounds[0] * 1000)...Int(bounds[1] * 1000)
            case "-h", "--help": throw ChaosUsageError(nil)
            default: throw ChaosUsageError("unknown argument '\(argument)'")
            }
            index += 1
        }
        guard seedGiven else { throw ChaosUsageError("--seed is required (the same seed gives the same fault schedule)") }
        return options
    }
}

/// A command line `BusChaos` cannot run; nil message: the help was asked for.
struct ChaosUsageError: Error {
    let message: String?
    init(_ message: String?) { self.message = message }
}
