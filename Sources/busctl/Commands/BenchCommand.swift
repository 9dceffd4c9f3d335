import Bus
import BusBench
import BusWire
import BusZMQ
import Foundation

/// `busctl bench`: C libzmq baselines, the Swift raw path and the bus measured in one run, side by side.
struct BenchCommand: BusctlCommand {
    static let name = "bench"
    static let overview = "Measure the bus against C libzmq baselines in one run and print both and their ratio."
    static let usage = "[pubsub|reqrep|fanout|memory|persist|all] [--seconds S] [--runs N] [--executor pool|io-thread] [--swift-raw] [--json]"
    static let maxPositionals: Int? = 1
    static let options = [
        OptionSpec("seconds", value: "S", help: "Length of each measurement.", default: "2"),
        OptionSpec("runs", value: "N", help: "Runs per figure; the median is reported with min and max.", default: "3"),
        OptionSpec(
            "executor", value: "pool|io-thread",
            help: "Where the bus side's handlers and callers run: the client's I/O thread (BusClient.taskExecutor) or the cooperative pool.",
            default: "io-thread"),
        OptionSpec("swift-raw", help: "Also run each transport figure on the package's Swift socket wrapper (RawBaseline)."),
        OptionSpec("json", help: "One JSON object with every figure."),
    ]
    static let discussion: String? = """
        Every ratio is the bus against a C baseline of the same run (CBaseline, built with busctl:
        plain libzmq in C, one process per role). The same path on the package's Swift socket
        wrapper is printed under each row with --swift-raw.
        pubsub  C PUB -> zmq_proxy (XSUB/XPUB, no high-water mark) -> SUB vs Bus publisher ->
                kernel -> Bus subscriber (64 B and 1 KiB payloads): delivered messages/s, lost.
        reqrep  C REQ -> zmq_proxy (ROUTER/DEALER) -> REP vs Bus client -> kernel -> Bus service:
                p50/p99/p99.9 one at a time; requests/s with 1, 8 and 64 in flight (C DEALER),
                and at 64 C sending a bus request's 7/MDP frames (the target's baseline).
        fanout  one publisher to 1, 4 and 16 subscribers: delivered messages/s in total.
        memory  kernel RSS idle, with 10 000 retained topics, and during a slow subscriber.
        persist durable events/s and p99 commit latency beside raw SQLite (PersistService --bench).
        Absolute figures drift on a shared machine: targets are ratios within one run.
        """

    enum Scenario: String, CaseIterable { case pubsub, reqrep, fanout, memory, persist, all }

    let scenario: Scenario
    let seconds: Double
    let runs: Int
    let json: Bool
    /// Whether the Swift raw path runs too (off by default: it adds a third of the run's time).
    let swiftRaw: Bool
    let execution: BusService.Execution

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let name = arguments.positionals.first ?? "all"
        guard let scenario = Scenario(rawValue: name) else {
            throw UsageError("unknown benchmark '\(name)' (use \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        self.scenario = scenario
        seconds = try arguments.double("seconds") ?? 2
        guard seconds >= 0.1 else { throw UsageError("--seconds must be at least 0.1") }
        runs = try arguments.int("runs") ?? 3
        guard runs >= 1 else { throw UsageError("--runs must be at least 1") }
        json = arguments.flag("json")
        swiftRaw = arguments.flag("swift-raw")
        switch arguments.value("executor") ?? "io-thread" {
        case "io-thread": execution = .ioThread
        case "pool": execution = .pool
        case let other: throw UsageError("--executor must be pool or io-thread, not '\(other)'")
        }
    }

    /// High-water marks of the C publish/subscribe baseline: none, as a plain libzmq deployment
    /// measured for the targets ran it (the bus and the Swift raw path keep the bus's 10 000).
    static let cHighWaterMark = 0

    func run() async throws -> Int32 {
        var figures: [BenchFigure] = []
        let started = Date()
        let want = { (s: Scenario) in scenario == .all || scenario == s }
        if want(.pubsub) {
            for size in [64, 1024] {
                figures.append(try await pubsubFigure(name: "pubsub \(size) B delivered", size: size, subscribers: 1, target: size == 64 ? 0.8 : nil))
            }
        }
        if want(.reqrep) {
            figures += try await reqrepFigures()
        }
        if want(.fanout) {
            for subscribers in [1, 4, 16] {
                figures.append(
                    try await pubsubFigure(
                        name: "fanout to \(subscribers)", size: 64, subscribers: subscribers, target: subscribers == 16 ? 0.8 : nil))
            }
        }
        if want(.memory) {
            progress("kernel memory")
            let memory = try await BusPath.memory(topics: 10_000, seconds: max(1, seconds), port: FreePorts.base())
            let mb = { (bytes: Int) in Double(bytes) / 1_048_576 }
            var idle = BenchFigure(name: "kernel RSS idle", unit: "MiB", kind: "abs", target: 30)
            idle.bus = [mb(memory.idle)]
            var retained = BenchFigure(name: "kernel RSS with 10000 retained topics", unit: "MiB", kind: "abs")
            retained.bus = [mb(memory.retained)]
            var slow = BenchFigure(name: "kernel RSS peak, slow subscriber", unit: "MiB", kind: "abs")
            slow.bus = [mb(memory.slowPeak)]
            slow.extra = [
                "published": "1 KiB events for \(max(1, seconds)) s to a subscriber with a 1-event buffer that does not read",
                "gaps_seen_by_slow_subscriber": memory.slowDrops,
            ]
            figures += [idle, retained, slow]
        }
        if want(.persist) {
            progress("persist")
            figures += try await persistFigures()
        }
        clearProgress()
        let elapsed = Date().timeIntervalSince(started)
        if json {
            let object: [String: Any] = [
                "figures": figures.map(\.object), "seconds": seconds, "runs": runs, "elapsed_s": elapsed,
                "executor": execution == .ioThread ? "io-thread" : "pool",
                "baseline": "C libzmq (CBaseline, one process per role); persist: raw SQLite",
                "c_pubsub_hwm": Self.cHighWaterMark,
                "machine": ["cores": ProcessInfo.processInfo.activeProcessorCount, "libzmq": ZMQContext.version],
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            printTable(figures)
            print(
                String(
                    format: "%d figures in %.0f s (%d run(s) of %.1f s each; %d cores, libzmq %@; bus handlers and callers on the %@)",
                    figures.count, elapsed, runs, seconds, ProcessInfo.processInfo.activeProcessorCount, ZMQContext.version,
                    execution == .ioThread ? "clients' I/O threads" : "cooperative pool"))
        }
        return ExitCode.ok
    }

    /// One publisher to `subscribers`: C, the bus (and the Swift raw path), `runs` times each.
    private func pubsubFigure(name: String, size: Int, subscribers: Int, target: Double?) async throws -> BenchFigure {
        var figure = BenchFigure(name: name, unit: "msg/s", kind: "min", target: target)
        var lost = (c: 0, raw: 0, bus: 0)
        var cut = 0
        for run in 1...runs {
            progress("\(name), run \(run)/\(runs): C")
            let c = try CBaseline.pubsub(size: size, subscribers: subscribers, hwm: Self.cHighWaterMark, seconds: seconds, port: FreePorts.base())
            figure.baseline.append(c.rate)
            lost.c += c.lost
            cut += c.cut
            if swiftRaw {
                progress("\(name), run \(run)/\(runs): Swift raw")
                let raw = try RawBaseline.pubsub(size: size, seconds: seconds, subscribers: subscribers, port: FreePorts.base())
                figure.swiftRaw.append(raw.rate)
                lost.raw += raw.lost
            }
            progress("\(name), run \(run)/\(runs): bus")
            let bus = try await BusPath.pubsub(size: size, seconds: seconds, subscribers: subscribers, port: FreePorts.base(), execution: execution)
            figure.bus.append(bus.rate)
            lost.bus += bus.lost
        }
        // Bytes per event on the wire: the payload, the topic (7) and the binary meta (about 40).
        let frameBytes = Double(size + 7 + 40)
        figure.extra = [
            "lost_c": lost.c, "lost_bus": lost.bus, "c_subscribers_cut": cut, "c_subscriber_runs": subscribers * runs,
            "mb_per_s_c": (BenchFigure.median(figure.baseline) ?? 0) * frameBytes / 1e6,
            "mb_per_s_bus": (BenchFigure.median(figure.bus) ?? 0) * frameBytes / 1e6,
        ]
        if swiftRaw { figure.extra["lost_swift_raw"] = lost.raw }
        return figure
    }

    /// Latency one at a time, then throughput with 1, 8 and 64 in flight; at 64 also with the
    /// frames a bus request carries (7/MDP's header and the one-frame body), the target's baseline.
    private func reqrepFigures() async throws -> [BenchFigure] {
        var p50 = BenchFigure(name: "reqrep p50 one at a time", unit: "µs", kind: "max", target: 1.2)
        var p99 = BenchFigure(name: "reqrep p99 one at a time", unit: "µs", kind: "max")
        var p999 = BenchFigure(name: "reqrep p99.9 one at a time", unit: "µs", kind: "max")
        for run in 1...runs {
            progress("reqrep latency, run \(run)/\(runs): C")
            let c = try CBaseline.latency(size: 64, seconds: seconds, port: FreePorts.base())
            if swiftRaw {
                progress("reqrep latency, run \(run)/\(runs): Swift raw")
                let raw = try RawBaseline.reqrepLatency(size: 64, seconds: seconds, port: FreePorts.base())
                p50.swiftRaw.append(percentile(raw, 0.5))
                p99.swiftRaw.append(percentile(raw, 0.99))
                p999.swiftRaw.append(percentile(raw, 0.999))
            }
            progress("reqrep latency, run \(run)/\(runs): bus")
            let bus = try await BusPath.reqrepLatency(size: 64, seconds: seconds, port: FreePorts.base(), execution: execution)
            p50.baseline.append(c.p50); p50.bus.append(percentile(bus, 0.5))
            p99.baseline.append(c.p99); p99.bus.append(percentile(bus, 0.99))
            p999.baseline.append(c.p999); p999.bus.append(percentile(bus, 0.999))
        }
        var figures = [p50, p99, p999]
        let plain = [[UInt8](repeating: 0x61, count: 64)]
        let mdp = RawBaseline.mdpShapedRequest(size: 64)
        for inFlight in [1, 8, 64] {
            let name = "reqrep \(inFlight) in flight"
            var figure = BenchFigure(name: name, unit: "req/s", kind: "min")
            var shaped = BenchFigure(name: "reqrep 64 in flight, 7/MDP frames", unit: "req/s", kind: "min", target: 0.8)
            for run in 1...runs {
                progress("\(name), run \(run)/\(runs): C")
                figure.baseline.append(try CBaseline.throughput(request: plain, inFlight: inFlight, seconds: seconds, port: FreePorts.base()))
                if swiftRaw {
                    progress("\(name), run \(run)/\(runs): Swift raw")
                    figure.swiftRaw.append(try RawBaseline.reqrepThroughput(size: 64, inFlight: inFlight, seconds: seconds, port: FreePorts.base()))
                }
                if inFlight == 64 {
                    progress("\(name), run \(run)/\(runs): C with the bus's frames")
                    shaped.baseline.append(try CBaseline.throughput(request: mdp, inFlight: inFlight, seconds: seconds, port: FreePorts.base()))
                    if swiftRaw {
                        progress("\(name), run \(run)/\(runs): Swift raw with the bus's frames")
                        shaped.swiftRaw.append(
                            try RawBaseline.reqrepThroughput(size: 64, inFlight: inFlight, seconds: seconds, port: FreePorts.base(), request: mdp))
                    }
                }
                progress("\(name), run \(run)/\(runs): bus")
                figure.bus.append(
                    try await BusPath.reqrepThroughput(size: 64, inFlight: inFlight, seconds: seconds, port: FreePorts.base(), execution: execution))
            }
            figures.append(figure)
            if inFlight == 64 {
                // The same bus runs against C sending the bus's frames: what libzmq alone does with them.
                shaped.bus = figure.bus
                if let ceiling = BenchFigure.ratio(shaped.baseline, figure.baseline) { shaped.extra = ["frame_ceiling": ceiling] }
                figures.append(shaped)
            }
        }
        return figures
    }

    /// Runs `PersistService --bench` (raw SQLite and through the bus, in one run) `runs` times.
    private func persistFigures() async throws -> [BenchFigure] {
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(
            "PersistService")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            FileHandle.standardError.write(Data("bench: persist skipped: \(binary.path) is not built\n".utf8))
            return []
        }
        var rate = BenchFigure(name: "persist durable events", unit: "events/s", kind: "min")
        var p99 = BenchFigure(name: "persist p99 commit latency", unit: "ms", kind: "max")
        for run in 1...runs {
            progress("persist, run \(run)/\(runs)")
            let process = Process()
            process.executableURL = binary
            process.arguments = ["--bench", "--seconds", String(seconds), "--json"]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0,
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let raw = object["raw_sqlite"] as? [String: Any], let bus = object["through_bus"] as? [String: Any]
            else { throw CommandFailure("PersistService --bench failed (status \(process.terminationStatus))") }
            rate.baseline.append((raw["events_per_s"] as? NSNumber)?.doubleValue ?? 0)
            rate.bus.append((bus["events_per_s"] as? NSNumber)?.doubleValue ?? 0)
            p99.baseline.append((raw["p99_ms"] as? NSNumber)?.doubleValue ?? 0)
            p99.bus.append((bus["p99_ms"] as? NSNumber)?.doubleValue ?? 0)
        }
        return [rate, p99]
    }

    private func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}

extension FreePorts {
    /// A base port for a benchmark kernel or forwarder.
    static func base() -> Int { kernelBase() ?? 30_000 }
}
