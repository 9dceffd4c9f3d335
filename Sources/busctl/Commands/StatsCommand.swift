import Bus
import Foundation

/// `busctl stats`: rates per topic and per service from two samples of `bus.stats`.
struct StatsCommand: BusctlCommand {
    static let name = "stats"
    static let overview = "Show per-topic and per-service rates, latency, errors and drops."
    static let usage = "[--watch] [--interval S] [--json] [options]"
    static let options =
        BusSettings.options + [
            OptionSpec("watch", help: "Keep printing every interval until Ctrl-C."),
            OptionSpec("interval", value: "S", help: "Seconds between the two samples rates are computed from.", default: "1"),
            BusSettings.json,
        ]
    static let discussion: String? = """
        Rates (MSG/S, BYTES/S, REQ/S) are the difference between two bus.stats samples taken
        --interval apart, divided by the kernel's own elapsed time. TOTAL, DROPS, ERRORS and
        FAILED count since the kernel started; P50/P99 are over the service's last 1024 replies.
        DROPS are events the kernel could not hand to a slow subscriber, a lower bound (see
        docs/PROTOCOL.md, Slow subscribers); after a drop a 'catch-up' line shows the streams
        whose newest event the kernel re-sends so a subscriber that lost a stream's end sees
        it. SUBS counts the subscriptions whose prefix covers the topic.
        --json prints one object per sample: {"time","interval_s","events":{...,"catch_up"},
        "topics":[{"topic","msgs_per_s","bytes_per_s","messages","bytes","drops","subscribers",
        "publishers","retained"}],"services":[{"service","instances","requests_per_s","p50_us",
        "p99_us","requests","errors","failed","queued"}]}.
        """

    var bus: BusSettings
    var watch: Bool
    var interval: Duration
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        watch = arguments.flag("watch")
        interval = try arguments.positiveSeconds("interval") ?? .seconds(1)
        json = arguments.flag("json")
    }

    func run() async throws -> Int32 {
        let command = self
        return try await bus.withBus { client in
            let initial = try await KernelStats.fetch(client, timeout: command.bus.connectTimeout)
            _ = try await runUntilInterrupted {
                var previous = initial
                let clock = ContinuousClock()
                var next = clock.now + command.interval
                var first = true
                repeat {
                    try await Task.sleep(until: next, clock: clock)
                    next += command.interval
                    let current = try await KernelStats.fetch(client, timeout: command.bus.connectTimeout)
                    let report = StatsReport(previous: previous, current: current)
                    if command.json {
                        Output.jsonLine(report.jsonObject())
                    } else {
                        if command.watch, Output.stdoutIsTerminal {
                            Output.write("\u{1B}[H\u{1B}[2J")
                        } else if !first {
                            Output.write("\n")
                        }
                        Output.write(report.text())
                    }
                    first = false
                    previous = current
                } while command.watch
            }
            return ExitCode.ok
        }
    }
}
