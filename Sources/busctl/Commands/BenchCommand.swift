import Bus
import Foundation

/// `busctl bench`: a raw-libzmq baseline and the bus path measured in one run, side by side.
struct BenchCommand: BusctlCommand {
    static let name = "bench"
    static let overview = "Measure the bus against a raw-libzmq baseline in one run and print both and their ratio."
    static let usage = "[pubsub|reqrep|fanout|memory|persist|all] [--seconds S] [--runs N] [--executor pool|io-thread] [--json]"
    static let maxPositionals: Int? = 1
    static let options = [
        OptionSpec("seconds", value: "S", help: "Length of each measurement.", default: "2"),
        OptionSpec("runs", value: "N", help: "Runs per figure; the median is reported with min and max.", default: "3"),
        OptionSpec(
            "executor", value: "pool|io-thread",
            help: "Where the bus side's handlers and callers run: the client's I/O thread (BusClient.taskExecutor) or the cooperative pool.",
            default: "io-thread"),
        OptionSpec("json", help: "One JSON object with every figure."),
    ]
    static let discussion: String? = """
        pubsub  raw PUB -> XSUB/XPUB proxy -> SUB vs Bus publisher -> kernel -> Bus subscriber
                (64 B and 1 KiB payloads): delivered messages/s, MB/s and messages lost.
        reqrep  raw REQ -> ROUTER/DEALER proxy -> REP vs Bus client -> kernel -> Bus service:
                p50/p99/p99.9 one at a time; requests/s with 1, 8 and 64 in flight, and at 64
                the raw path again carrying a bus request's 7/MDP frames (the frame ceiling).
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
        switch arguments.value("executor") ?? "io-thread" {
        case "io-thread": execution = .ioThread
        case "pool": execution = .pool
        case let other: throw UsageError("--executor must be pool or io-thread, not '\(other)'")
        }
    }

    struct Figure {
        var name: String
        var unit: String
        var baseline: [Double]
        var bus: [Double]
        /// "min" when the bus must reach `target` x baseline, "max" when it must stay under it,
        /// "abs" for an absolute bound on the bus figure (no baseline).
        var kind: String
        var target: Double?
        var extra: [String: Any] = [:]

        var ratio: Double? {
            guard let b = Self.median(baseline), b > 0, let v = Self.median(bus) else { return nil }
            return v / b
        }

        var met: Bool? {
            guard let target else { return nil }
            switch kind {
            case "min": return ratio.map { $0 >= target }
            case "max": return ratio.map { $0 <= target }
            default: return Self.median(bus).map { $0 <= target }
            }
        }

        static func median(_ values: [Double]) -> Double? {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }

        /// Median, min, max and every run of `v`, for JSON; null when there is none.
        static func stats(_ v: [Double]) -> Any {
            guard let m = median(v) else { return NSNull() }
            return ["median": m, "min": v.min()!, "max": v.max()!, "runs": v]
        }

        var object: [String: Any] {
            var o: [String: Any] = ["name": name, "unit": unit, "baseline": Self.stats(baseline), "bus": Self.stats(bus)]
            if let ratio { o["ratio"] = ratio }
            if let target {
                o["target"] = kind == "abs" ? "<= \(target) \(unit)" : "\(kind == "min" ? ">=" : "<=") \(target)x"
            }
            if let met { o["met"] = met }
            for (k, v) in extra { o[k] = v }
            return o
        }
    }

    func run() async throws -> Int32 {
        var figures: [Figure] = []
        let started = Date()
        let want = { (s: Scenario) in scenario == .all || scenario == s }
        if want(.pubsub) {
            for size in [64, 1024] {
                var figure = Figure(
                    name: "pubsub \(size) B delivered", unit: "msg/s", baseline: [], bus: [], kind: "min", target: size == 64 ? 0.8 : nil)
                var lost = (raw: 0, bus: 0)
                for run in 1...runs {
                    progress("pubsub \(size) B, run \(run)/\(runs): raw")
                    let raw = try RawBaseline.pubsub(size: size, seconds: seconds, subscribers: 1, port: FreePorts.base())
                    figure.baseline.append(raw.rate)
                    lost.raw += raw.lost
                    progress("pubsub \(size) B, run \(run)/\(runs): bus")
                    let bus = try await BusPath.pubsub(size: size, seconds: seconds, subscribers: 1, port: FreePorts.base(), execution: execution)
                    figure.bus.append(bus.rate)
                    lost.bus += bus.lost
                }
                let frameBytes = Double(size + 7 + 40)
                figure.extra = [
                    "lost_raw": lost.raw, "lost_bus": lost.bus,
                    "mb_per_s_raw": (Figure.median(figure.baseline) ?? 0) * frameBytes / 1e6,
                    "mb_per_s_bus": (Figure.median(figure.bus) ?? 0) * frameBytes / 1e6,
                ]
                figures.append(figure)
            }
        }
        if want(.reqrep) {
            var p50 = Figure(name: "reqrep p50 one at a time", unit: "µs", baseline: [], bus: [], kind: "max", target: 1.2)
            var p99 = Figure(name: "reqrep p99 one at a time", unit: "µs", baseline: [], bus: [], kind: "max", target: nil)
            var p999 = Figure(name: "reqrep p99.9 one at a time", unit: "µs", baseline: [], bus: [], kind: "max", target: nil)
            for run in 1...runs {
                progress("reqrep latency, run \(run)/\(runs): raw")
                let raw = try RawBaseline.reqrepLatency(size: 64, seconds: seconds, port: FreePorts.base())
                progress("reqrep latency, run \(run)/\(runs): bus")
                let bus = try await BusPath.reqrepLatency(size: 64, seconds: seconds, port: FreePorts.base(), execution: execution)
                p50.baseline.append(percentile(raw, 0.5)); p50.bus.append(percentile(bus, 0.5))
                p99.baseline.append(percentile(raw, 0.99)); p99.bus.append(percentile(bus, 0.99))
                p999.baseline.append(percentile(raw, 0.999)); p999.bus.append(percentile(bus, 0.999))
            }
            figures += [p50, p99, p999]
            for inFlight in [1, 8, 64] {
                var figure = Figure(
                    name: "reqrep \(inFlight) in flight", unit: "req/s", baseline: [], bus: [], kind: "min", target: inFlight == 64 ? 0.8 : nil)
                // At 64 in flight libzmq's per-frame work is a large share of the raw path's, so the
                // raw forwarder also runs with the frames a bus request carries (7/MDP's header and
                // the one-frame body): what a bus whose own code cost nothing could reach.
                var mdpShaped: [Double] = []
                for run in 1...runs {
                    progress("reqrep \(inFlight) in flight, run \(run)/\(runs): raw")
                    figure.baseline.append(try RawBaseline.reqrepThroughput(size: 64, inFlight: inFlight, seconds: seconds, port: FreePorts.base()))
                    if inFlight == 64 {
                        progress("reqrep \(inFlight) in flight, run \(run)/\(runs): raw with the bus's frames")
                        mdpShaped.append(
                            try RawBaseline.reqrepThroughput(
                                size: 64, inFlight: inFlight, seconds: seconds, port: FreePorts.base(),
                                request: RawBaseline.mdpShapedRequest(size: 64)))
                    }
                    progress("reqrep \(inFlight) in flight, run \(run)/\(runs): bus")
                    figure.bus.append(
                        try await BusPath.reqrepThroughput(
                            size: 64, inFlight: inFlight, seconds: seconds, port: FreePorts.base(), execution: execution))
                }
                if let shaped = Figure.median(mdpShaped), let raw = Figure.median(figure.baseline), let bus = Figure.median(figure.bus),
                    raw > 0, shaped > 0
                {
                    figure.extra = [
                        "raw_with_bus_frames": Figure.stats(mdpShaped),
                        "frame_ceiling": shaped / raw, "ratio_to_raw_with_bus_frames": bus / shaped,
                    ]
                }
                figures.append(figure)
            }
        }
        if want(.fanout) {
            for subscribers in [1, 4, 16] {
                var figure = Figure(
                    name: "fanout to \(subscribers)", unit: "msg/s", baseline: [], bus: [], kind: "min", target: subscribers == 16 ? 0.8 : nil)
                var lost = (raw: 0, bus: 0)
                for run in 1...runs {
                    progress("fanout to \(subscribers), run \(run)/\(runs): raw")
                    let raw = try RawBaseline.pubsub(size: 64, seconds: seconds, subscribers: subscribers, port: FreePorts.base())
                    figure.baseline.append(raw.rate)
                    lost.raw += raw.lost
                    progress("fanout to \(subscribers), run \(run)/\(runs): bus")
                    let bus = try await BusPath.pubsub(
                        size: 64, seconds: seconds, subscribers: subscribers, port: FreePorts.base(), execution: execution)
                    figure.bus.append(bus.rate)
                    lost.bus += bus.lost
                }
                figure.extra = ["lost_raw": lost.raw, "lost_bus": lost.bus]
                figures.append(figure)
            }
        }
        if want(.memory) {
            progress("kernel memory")
            let memory = try await BusPath.memory(topics: 10_000, seconds: max(1, seconds), port: FreePorts.base())
            let mb = { (bytes: Int) in Double(bytes) / 1_048_576 }
            figures.append(Figure(name: "kernel RSS idle", unit: "MiB", baseline: [], bus: [mb(memory.idle)], kind: "abs", target: 30))
            figures.append(
                Figure(name: "kernel RSS with 10000 retained topics", unit: "MiB", baseline: [], bus: [mb(memory.retained)], kind: "abs", target: nil)
            )
            var slow = Figure(
                name: "kernel RSS peak, slow subscriber", unit: "MiB", baseline: [], bus: [mb(memory.slowPeak)], kind: "abs", target: nil)
            slow.extra = [
                "published": "1 KiB events for \(max(1, seconds)) s to a subscriber with a 1-event buffer that does not read",
                "gaps_seen_by_slow_subscriber": memory.slowDrops,
            ]
            figures.append(slow)
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

    /// Runs `PersistService --bench` (raw SQLite and through the bus, in one run) `runs` times.
    private func persistFigures() async throws -> [Figure] {
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(
            "PersistService")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            FileHandle.standardError.write(Data("bench: persist skipped: \(binary.path) is not built\n".utf8))
            return []
        }
        var rate = Figure(name: "persist durable events", unit: "events/s", baseline: [], bus: [], kind: "min", target: nil)
        var p99 = Figure(name: "persist p99 commit latency", unit: "ms", baseline: [], bus: [], kind: "max", target: nil)
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

    private func format(_ value: Double?, _ unit: String) -> String {
        guard let value else { return "-" }
        if unit == "msg/s" || unit == "req/s" || unit == "events/s" {
            return value >= 1e6 ? String(format: "%.2f M", value / 1e6) : String(format: "%.0f k", value / 1e3)
        }
        return String(format: "%.1f", value)
    }

    private func printTable(_ figures: [Figure]) {
        func cell(_ v: [Double], _ unit: String) -> String {
            guard let m = Figure.median(v) else { return "-" }
            return "\(format(m, unit)) [\(format(v.min(), unit))-\(format(v.max(), unit))]"
        }
        print(
            "figure".padding(toLength: 40, withPad: " ", startingAt: 0) + "unit   " + "raw libzmq".padding(toLength: 28, withPad: " ", startingAt: 0)
                + "bus".padding(toLength: 28, withPad: " ", startingAt: 0) + "ratio   target")
        for f in figures {
            let ratio = f.ratio.map { String(format: "%.2fx", $0) } ?? "-"
            var target = ""
            if let t = f.target {
                target = f.kind == "abs" ? "<= \(Int(t)) \(f.unit)" : String(format: "%@ %.1fx", f.kind == "min" ? ">=" : "<=", t)
                target += f.met == true ? "  met" : "  MISSED"
            }
            print(
                f.name.padding(toLength: 40, withPad: " ", startingAt: 0) + f.unit.padding(toLength: 10, withPad: " ", startingAt: 0)
                    + cell(f.baseline, f.unit).padding(toLength: 28, withPad: " ", startingAt: 0)
                    + cell(f.bus, f.unit).padding(toLength: 28, withPad: " ", startingAt: 0)
                    + ratio.padding(toLength: 8, withPad: " ", startingAt: 0) + target)
            if let lostRaw = f.extra["lost_raw"], let lostBus = f.extra["lost_bus"] {
                print("    lost: raw \(lostRaw), bus \(lostBus)")
            }
            if let shaped = f.extra["raw_with_bus_frames"] as? [String: Any], let runs = shaped["runs"] as? [Double],
                let ceiling = f.extra["frame_ceiling"] as? Double, let ratio = f.extra["ratio_to_raw_with_bus_frames"] as? Double
            {
                print(
                    "    raw with the bus's 7/MDP frames: \(cell(runs, f.unit)), \(String(format: "%.2fx", ceiling)) of raw "
                        + "(the ceiling for the bus's frames); bus \(String(format: "%.2fx", ratio)) of it")
            }
        }
    }

    private func progress(_ text: String) {
        let tty = isatty(2) == 1
        FileHandle.standardError.write(Data((tty ? "\r\u{1B}[2Kbench: \(text)" : "bench: \(text)\n").utf8))
    }

    private func clearProgress() {
        if isatty(2) == 1 { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }
}

extension FreePorts {
    /// A base port for a benchmark kernel or forwarder.
    static func base() -> Int { kernelBase() ?? 30_000 }
}
