import Bus
import Foundation

/// `busctl replay FILE`: republishes a recording into the live bus with its timing.
struct ReplayCommand: BusctlCommand {
    static let name = "replay"
    static let overview = "Replay a recording into the bus, with its timing scaled by --speed."
    static let usage = "FILE [--speed X] [options]"
    static let maxPositionals: Int? = 1
    static let options =
        BusSettings.options + [
            OptionSpec("speed", value: "X", help: "Time scale: 2 is twice as fast, 0.5 half; 0 as fast as possible.", default: "1")
        ]
    static let discussion: String? = """
        Every event is sent with its recorded topic, payload and meta (source, instance, seq,
        timestamp, content type, correlation ids, retained flag) plus the 'replayed' flag; a
        current value recorded at the start loses its 'snapshot' flag, a kernel repeat its
        'repeated' flag. Subscribers see replayed
        events as such ([replayed] in monitor) and never count them as gaps. The kernel keeps
        a replayed retained event as the topic's current value only if its seq is newer than
        the one it holds, so replaying into an empty kernel rebuilds the recorded state and
        replaying into a live one does not roll it back.
        A progress line is redrawn on stderr when it is a terminal; a summary line at the end.
        Exit status 65 when FILE is not a valid recording (the header names the format version
        and protocol; both are checked before anything is sent), 1 when it cannot be read,
        5 when the kernel cannot be reached, 1 when interrupted before the end.
        See 'busctl record --help' for the format.
        """

    var bus: BusSettings
    var file: String
    var speed: Double

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        file = try arguments.positional(0, "FILE")
        speed = try arguments.double("speed") ?? 1
    }

    func run() async throws -> Int32 {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw CommandFailure("cannot read \(file): \((error as NSError).localizedDescription)")
        }
        let entries: [Recording.Entry]
        do {
            entries = try Recording.read(data, name: file).1
        } catch {
            throw CommandFailure(error.description, code: ExitCode.dataError)
        }
        let command = self
        let tally = Tally()
        let clock = ContinuousClock()
        let started = clock.now
        let (outcome, progressLine) = try await bus.withBus { client in
            let ticker = Task {
                var progress = ProgressLine()
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    progress.update(
                        "replaying \(command.file): \(tally.events)/\(entries.count) events, \(Format.bytes(Double(tally.bytes))), \(Format.age(ms: (clock.now - started).milliseconds))"
                    )
                }
                return progress
            }
            let outcome: RunOutcome<Void>
            do {
                outcome = try await runUntilInterrupted {
                    let begin = clock.now
                    for (index, entry) in entries.enumerated() {
                        if command.speed > 0 {
                            let due = begin + .microseconds(Int64(Double(entry.offsetUs) / command.speed))
                            if due > clock.now { try await Task.sleep(until: due, clock: clock) }
                        } else if index % 1000 == 999 {
                            // As fast as possible, but never faster than the kernel takes them.
                            _ = await client.flushPublishes(timeout: command.bus.connectTimeout)
                        }
                        try Task.checkCancellation()
                        var meta = try EventMeta.decode(entry.meta)
                        meta.flags.insert(.replayed)
                        meta.flags.subtract([.snapshot, .repeated])
                        let encoded = meta.encode()
                        try client.send(event: [Array(entry.topic.utf8), encoded, entry.payload])
                        tally.add(bytes: entry.topic.utf8.count + encoded.count + entry.payload.count)
                    }
                }
            } catch {
                ticker.cancel()
                throw error
            }
            ticker.cancel()
            let progress = await ticker.value
            guard await client.flushPublishes(timeout: max(command.bus.connectTimeout, .seconds(5))) else {
                throw CommandFailure(
                    "the kernel's events-in endpoint \(command.bus.endpoints.eventsIn) did not take the replayed events",
                    code: ExitCode.unreachable)
            }
            return (outcome, progress)
        }
        var progress = progressLine
        let summary =
            "\(tally.events) events (\(Format.bytes(Double(tally.bytes)))) in \(Format.age(ms: (clock.now - started).milliseconds)) from \(file) at speed \(Format.number(speed))"
        if case .interrupted = outcome {
            progress.finish("interrupted: replayed \(tally.events) of \(entries.count) events")
            return ExitCode.failure
        }
        progress.finish("replayed \(summary)")
        return ExitCode.ok
    }
}
