import Bus
import Foundation

/// `busctl monitor [PATTERN...]`: live events, current values first.
struct MonitorCommand: BusctlCommand {
    static let name = "monitor"
    static let overview = "Show live events (current values of retained topics first)."
    static let usage = "[PATTERN...] [--count N] [--timeout S] [--live] [--full] [--json] [options]"
    static let maxPositionals: Int? = nil
    static let options =
        BusSettings.options + [
            OptionSpec("count", value: "N", help: "Exit after N events."),
            OptionSpec("timeout", value: "S", help: "Stop after S seconds."),
            OptionSpec("live", help: "Skip the current values; only events published from now on."),
            OptionSpec("full", help: "Never shorten payloads."),
            BusSettings.json,
        ]
    static let discussion: String? = """
        PATTERN is a topic or a wildcard pattern: '*' matches one token, '>' the rest
        ('feed.*.voted', 'auth.>'); none means every topic. For each matching retained topic the
        current value comes first, tagged [current] ("snapshot": true in JSON).
        A line reads: TIME TOPIC SOURCE #SEQ [tags] PAYLOAD; payloads are cut to the terminal
        width (400 characters when not a terminal) unless --full.
        Lost events are never hidden: a gap in sequence numbers prints a '--- gap: N event(s)
        missed ---' line before the event ("missed": N in JSON).
        --json prints one object per event: {"topic","source","instance","seq","time","time_us",
        "payload"} plus "snapshot", "missed", "retained", "replayed", "repeated" when they apply.
        [repeated]: the kernel re-sent a stream's newest event after dropping events for a full
        subscriber queue; shown only when this monitor had not seen it (it lost the stream's end).
        A sequence number not above the last one of its stream (a duplicate, or out of order;
        for a retained topic, whatever the instance) is tagged [OUT OF SEQUENCE]
        ("out_of_sequence": true).
        When it stops on Ctrl-C or --timeout, it compares every retained topic it showed with the
        kernel's current value: a stream whose last events it never showed (lost, or not read
        in time) prints '--- tail not seen: N event(s) of TOPIC after #SEQ (current #SEQ) ---'
        ({"topic","tail_not_seen","last_seq","current_seq"} in JSON) and exits 6.
        Runs until Ctrl-C, --count events (current values count), or --timeout seconds. Exit
        status 0, except 3 when --count was given and not reached within --timeout, and 6 when
        the tail of a retained topic was not seen.
        """

    var bus: BusSettings
    var patterns: [String]
    var count: Int?
    var timeout: Duration?
    var liveOnly: Bool
    var full: Bool
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        patterns = arguments.positionals.isEmpty ? [">"] : arguments.positionals
        for pattern in patterns {
            do { _ = try TopicPattern(pattern) } catch { throw UsageError(error.description) }
        }
        count = try arguments.positiveInt("count")
        timeout = try arguments.positiveSeconds("timeout")
        liveOnly = arguments.flag("live")
        full = arguments.flag("full")
        json = arguments.flag("json")
    }

    func run() async throws -> Int32 {
        let command = self
        return try await bus.withBus { client in
            let subscription = try client.subscribe(command.patterns)
            if Output.stderrIsTerminal {
                Output.error("monitoring \(command.patterns.joined(separator: " ")) on \(command.bus.endpoints.requests) (Ctrl-C to stop)\n")
            }
            let seen = Tally()
            let tails = TailCheck()
            let outcome = try await runUntilInterrupted(timeout: command.timeout) {
                var printer = EventPrinter(json: command.json, full: command.full)
                var filter = SnapshotFilter(liveOnly: command.liveOnly)
                for await event in subscription {
                    guard filter.admit(event) else { continue }
                    printer.print(event)
                    tails.note(event)
                    seen.add(bytes: event.payload.count)
                    if let count = command.count, seen.events >= count { return true }
                }
                return false
            }
            if case .timedOut = outcome, let count = command.count {
                throw CommandFailure("saw \(seen.events) of \(count) events within \(Format.seconds(command.timeout!)) s", code: ExitCode.timeout)
            }
            if case .finished = outcome { return ExitCode.ok }
            let missing = await tails.missing(client, stoppedAtUs: WallClock.microsNow(), timeout: command.bus.connectTimeout)
            for tail in missing {
                if command.json {
                    Output.jsonLine(["topic": tail.topic, "tail_not_seen": tail.count, "last_seq": tail.lastSeen, "current_seq": tail.current])
                } else {
                    Output.line("--- tail not seen: \(tail.count) event(s) of \(tail.topic) after #\(tail.lastSeen) (current #\(tail.current)) ---")
                }
            }
            return missing.isEmpty ? ExitCode.ok : ExitCode.lostTail
        }
    }
}
