import Bus
import Foundation

/// `busctl record FILE [PATTERN...]`: writes the events it sees to a recording.
struct RecordCommand: BusctlCommand {
    static let name = "record"
    static let overview = "Record events (topics, meta, payloads, timing) to a file for replay."
    static let usage = "FILE [PATTERN...] [--duration S] [--count N] [--live] [--force] [options]"
    static let maxPositionals: Int? = nil
    static let options =
        BusSettings.options + [
            OptionSpec("duration", value: "S", help: "Stop after S seconds."),
            OptionSpec("count", value: "N", help: "Stop after N events."),
            OptionSpec("live", help: "Leave out the current values of retained topics sent at the start."),
            OptionSpec("force", help: "Overwrite FILE if it exists."),
        ]
    static let discussion: String? = """
        PATTERN as for monitor (none: every topic). Records until Ctrl-C, --duration or --count,
        whichever comes first; exit status 0 in each case. By default the recording starts with
        the current value of every matching retained topic, so a replay rebuilds the state.
        A progress line (events, bytes, elapsed) is redrawn on stderr while recording when stderr
        is a terminal; otherwise one summary line is printed at the end.
        FORMAT: JSON lines. Line 1 is the header {"format":"swiftbus-recording","version":1,
        "protocol":1,"started_us":T,"patterns":[...],"kernel":URL,"busctl":V}; then one line per
        event {"t_us":OFFSET,"topic":TOPIC,"meta_b64":META,"payload_b64":PAYLOAD} with the
        offset in microseconds from started_us and the exact meta and payload frames in base64.
        """

    var bus: BusSettings
    var file: String
    var patterns: [String]
    var duration: Duration?
    var count: Int?
    var liveOnly: Bool
    var force: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        file = try arguments.positional(0, "FILE")
        guard !file.isEmpty, file != "-" else { throw UsageError("FILE must name a file") }
        patterns = arguments.positionals.count > 1 ? Array(arguments.positionals.dropFirst()) : [">"]
        for pattern in patterns {
            do { _ = try TopicPattern(pattern) } catch { throw UsageError(error.description) }
        }
        duration = try arguments.positiveSeconds("duration")
        count = try arguments.positiveInt("count")
        liveOnly = arguments.flag("live")
        force = arguments.flag("force")
    }

    func run() async throws -> Int32 {
        if !force, FileManager.default.fileExists(atPath: file) {
            throw CommandFailure("\(file) exists; pass --force to overwrite it")
        }
        let command = self
        let tally = Tally()
        let clock = ContinuousClock()
        let started = clock.now
        // The file is created once the kernel has answered, so an unreachable kernel leaves none.
        var (progress, writer) = try await bus.withBus { client in
            let writer = try RecordingWriter(path: command.file, overwrite: true)
            do {
                let subscription = try client.subscribe(command.patterns)
                let begin = clock.now
                writer.append(
                    Recording.Header(startedUs: Format.nowMicros(), patterns: command.patterns, kernel: command.bus.endpoints.requests).line)
                let ticker = Task {
                    var progress = ProgressLine()
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(250))
                        writer.flush()
                        progress.update(
                            "recording to \(writer.path): \(tally.events) events, \(Format.bytes(Double(tally.bytes))), \(Format.age(ms: (clock.now - started).milliseconds))"
                        )
                    }
                    return progress
                }
                do {
                    _ = try await runUntilInterrupted(timeout: command.duration) {
                        var filter = SnapshotFilter(liveOnly: command.liveOnly)
                        for await event in subscription {
                            guard filter.admit(event) else { continue }
                            let meta = event.meta.encode()
                            let offset = UInt64(max(0, (clock.now - begin).microseconds))
                            writer.append(Recording.Entry(offsetUs: offset, topic: event.topic, meta: meta, payload: Array(event.payload)).line)
                            tally.add(bytes: event.topic.utf8.count + meta.count + event.payload.count)
                            if let failure = writer.failure { throw CommandFailure(failure) }
                            if let count = command.count, tally.events >= count { return }
                        }
                    }
                } catch {
                    ticker.cancel()
                    throw error
                }
                ticker.cancel()
                return (await ticker.value, writer)
            } catch {
                writer.close()
                throw error
            }
        }
        writer.close()
        if let failure = writer.failure { throw CommandFailure(failure) }
        progress.finish(
            "recorded \(tally.events) events (\(Format.bytes(Double(tally.bytes)))) in \(Format.age(ms: (clock.now - started).milliseconds)) to \(file)"
        )
        return ExitCode.ok
    }
}
