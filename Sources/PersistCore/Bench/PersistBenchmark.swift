import Bus
import BusKernel
import Foundation

/// `PersistService --bench` (later `busctl bench persist`): durable events per second with
/// group commit and the commit latency, through the bus and against a raw SQLite baseline, in
/// one run.
///
/// - Raw baseline: the same engine and the same inserts (same schema, WAL, same synchronous
///   mode, group commit), fed directly by a producer with no bus; latency is from queueing an
///   event to its commit.
/// - Through the bus: a kernel started in-process on free loopback ports, a `persist` server
///   (the real one) on its own `BusClient`, and a publisher `BusClient` publishing retained
///   events; latency is from `publish` to receiving the `persist.committed` event that lists
///   the event. Both phases keep at most `window` events unacknowledged (a closed loop), so
///   the rate is what the disk sustains, not what a queue absorbs.
public enum PersistBenchmark {
    public struct Options: Sendable {
        public var seconds: Double = 3
        public var topics = 16
        public var payloadBytes = 64
        public var window = 1000
        public var durability: Durability = .full
        /// Where the two temporary databases go (removed afterwards); default: the temp folder.
        public var directory: URL?
        public init() {}
    }

    public struct Phase: Sendable {
        public var name: String
        public var events: Int
        public var seconds: Double
        public var commits: UInt64
        public var eventsPerSecond: Double { seconds > 0 ? Double(events) / seconds : 0 }
        public var averageBatch: Double { commits > 0 ? Double(events) / Double(commits) : 0 }
        public var p50Ms: Double
        public var p99Ms: Double
        public var maxMs: Double
    }

    public struct Result: Sendable {
        public var options: Options
        public var raw: Phase
        public var bus: Phase
        /// Through the bus / raw, in events per second.
        public var ratio: Double { raw.eventsPerSecond > 0 ? bus.eventsPerSecond / raw.eventsPerSecond : 0 }

        public var text: String {
            func line(_ phase: Phase) -> String {
                "  " + (phase.name + ":").padding(toLength: 24, withPad: " ", startingAt: 0)
                    + String(
                        format: "%9.0f events/s   p50 %7.2f ms   p99 %7.2f ms   max %7.2f ms   %6.1f events/commit   (%d events, %.1f s)",
                        phase.eventsPerSecond, phase.p50Ms, phase.p99Ms, phase.maxMs, phase.averageBatch, phase.events, phase.seconds)
            }
            return """
                persist benchmark: durable events with group commit (SQLite WAL, synchronous=\(options.durability.rawValue.uppercased())), \
                \(options.topics) topics, \(options.payloadBytes)-byte payloads, window \(options.window)
                \(line(raw))
                \(line(bus))
                  through the bus / raw:  \(String(format: "%.2f", ratio))

                """
        }

        public var json: String {
            func phase(_ p: Phase) -> [String: Any] {
                [
                    "events": p.events, "seconds": p.seconds, "events_per_s": p.eventsPerSecond, "commits": p.commits,
                    "events_per_commit": p.averageBatch, "p50_ms": p.p50Ms, "p99_ms": p.p99Ms, "max_ms": p.maxMs,
                ]
            }
            let object: [String: Any] = [
                "benchmark": "persist", "synchronous": options.durability.rawValue, "topics": options.topics,
                "payload_bytes": options.payloadBytes, "window": options.window, "seconds_per_phase": options.seconds,
                "raw_sqlite": phase(raw), "through_bus": phase(bus), "ratio": ratio,
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])) ?? Data()
            return String(decoding: data, as: UTF8.self) + "\n"
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs both phases and returns their numbers.
    public static func run(_ options: Options, logger: Logger = Logger(label: "bench", level: .warning)) async throws -> Result {
        let base = (options.directory ?? FileManager.default.temporaryDirectory).appendingPathComponent(
            "persist-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let raw = try await rawPhase(options, path: base.appendingPathComponent("raw.sqlite").path)
        let bus = try await busPhase(options, path: base.appendingPathComponent("bus.sqlite").path, logger: logger)
        return Result(options: options, raw: raw, bus: bus)
    }

    static func payload(_ i: Int, size: Int) -> [UInt8] {
        let head = "{\"i\":\(i),\"pad\":\""
        let pad = max(0, size - head.utf8.count - 2)
        return Array((head + String(repeating: "x", count: pad) + "\"}").utf8)
    }

    static func engineConfiguration(_ options: Options, path: String) -> PersistEngine.Configuration {
        var config = PersistEngine.Configuration(path: path)
        config.durability = options.durability
        config.check = .none
        config.retention = RetentionPolicy(rules: [])
        return config
    }

    // MARK: raw

    static func rawPhase(_ options: Options, path: String) async throws -> Phase {
        var config = engineConfiguration(options, path: path)
        config.recordLatency = true
        config.queueCapacity = options.window
        let engine = try await PersistEngine.open(config)
        let tally = Locked((events: 0, commits: UInt64(0), latencies: [Duration](), last: ContinuousClock.now))
        let collector = Task {
            for await event in engine.events {
                guard case .committed(let report) = event else { continue }
                let now = ContinuousClock.now
                tally.withLock {
                    $0.events += report.events
                    $0.commits += 1
                    $0.latencies += report.latencies
                    $0.last = now
                }
            }
        }
        let start = ContinuousClock.now
        let end = start + .milliseconds(Int64(options.seconds * 1000))
        var produced = 0
        var seqs = [UInt64](repeating: 0, count: options.topics)
        let instance = "bench-raw"
        while ContinuousClock.now < end {
            for _ in 0..<64 {
                let t = produced % options.topics
                seqs[t] += 1
                let meta = EventMeta(flags: .retained, seq: seqs[t], timestampMicros: WallClock.microsNow(), source: "bench", instance: instance)
                await engine.append(
                    StoredEvent(
                        topic: "bench.t\(t)", meta: meta, payload: payload(produced, size: options.payloadBytes),
                        storedMicros: WallClock.microsNow(), origin: .live))
                produced += 1
            }
        }
        let total = produced
        let deadline = ContinuousClock.now + .seconds(30)
        while tally.withLock({ $0.events }) < total && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        await engine.close()
        await collector.value
        let result = tally.withLock { $0 }
        guard result.events >= total else { throw Failure(description: "raw phase: only \(result.events) of \(total) events committed within 30 s") }
        return phase(
            "raw SQLite (no bus)", events: result.events, seconds: seconds(result.last - start), commits: result.commits, latencies: result.latencies)
    }

    // MARK: through the bus

    static func busPhase(_ options: Options, path: String, logger: Logger) async throws -> Phase {
        let port = try freeBase()
        let endpoints = try Endpoints(kernel: "tcp://127.0.0.1:\(port)")
        let kernel = Kernel(config: KernelConfig(endpoints: endpoints), logger: Logger(label: "bench.kernel", level: .warning))
        try await kernel.start()
        var persistOptions = BusOptions(endpoints: endpoints, name: "persist")
        persistOptions.logger = logger
        let persistBus = BusClient(options: persistOptions)
        var publisherOptions = BusOptions(endpoints: endpoints, name: "bench")
        publisherOptions.logger = logger
        let publisher = BusClient(options: publisherOptions)
        let engine = try await PersistEngine.open(engineConfiguration(options, path: path))
        var serverOptions = PersistServer.Options()
        serverOptions.compactEvery = nil
        let server = PersistServer(bus: persistBus, engine: engine, options: serverOptions, logger: logger)

        let tracker = AckTracker(topics: options.topics, instance: publisher.instance)
        let acks = try publisher.subscribe("persist.committed")
        let (progress, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let consumer = Task {
            for await event in acks {
                tracker.record(Array(event.payload), at: .now)
                signal.yield()
            }
        }
        // Wakes the waiting loops now and then, so their deadlines hold even if acks stop.
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(200))
                signal.yield()
            }
        }
        func cleanup() async {
            ticker.cancel()
            consumer.cancel()
            await server.stop()
            await publisher.close()
            await persistBus.close()
            kernel.stop()
        }
        do {
            try await acks.confirm(timeout: .seconds(10))
            try server.start()
            // Warm-up: one retained event per topic, acknowledged, proves the whole path.
            for t in 0..<options.topics {
                tracker.sent(topic: t, seq: 1, at: .now)
                try await publisher.publish("bench.t\(t)", payload: payload(0, size: options.payloadBytes), retain: true)
            }
            var waiter = progress.makeAsyncIterator()
            let warm = ContinuousClock.now + .seconds(15)
            while tracker.acknowledged < options.topics {
                guard ContinuousClock.now < warm else {
                    throw Failure(description: "bus phase: persist did not acknowledge the warm-up events within 15 s")
                }
                _ = await waiter.next()
            }
            tracker.resetCounts()
            let start = ContinuousClock.now
            let end = start + .milliseconds(Int64(options.seconds * 1000))
            var sent = 0
            var seqs = [UInt64](repeating: 1, count: options.topics)
            while ContinuousClock.now < end {
                while sent - tracker.acknowledged >= options.window {
                    guard ContinuousClock.now < end + .seconds(15) else {
                        throw Failure(description: "bus phase: acknowledgements stopped at \(tracker.acknowledged) of \(sent)")
                    }
                    _ = await waiter.next()
                }
                let t = sent % options.topics
                seqs[t] += 1
                tracker.sent(topic: t, seq: seqs[t], at: .now)
                try await publisher.publish("bench.t\(t)", payload: payload(sent, size: options.payloadBytes), retain: true)
                sent += 1
            }
            let drain = ContinuousClock.now + .seconds(30)
            while tracker.acknowledged < sent {
                guard ContinuousClock.now < drain else {
                    throw Failure(description: "bus phase: only \(tracker.acknowledged) of \(sent) events acknowledged within 30 s")
                }
                _ = await waiter.next()
            }
            let result = tracker.snapshot()
            let commits = engine.writerStatistics.commits
            await cleanup()
            return phase(
                "through the bus", events: result.count, seconds: seconds(result.last - start), commits: commits, latencies: result.latencies)
        } catch {
            await cleanup()
            throw error
        }
    }

    /// Publish times by topic and seq, matched against `persist.committed` ranges.
    final class AckTracker: Sendable {
        struct State {
            var sentAt: [[UInt64: ContinuousClock.Instant]]
            var latencies: [Duration] = []
            var acknowledged = 0
            var last = ContinuousClock.now
        }
        private let state: Locked<State>
        let instance: String

        init(topics: Int, instance: String) {
            state = Locked(State(sentAt: Array(repeating: [:], count: topics)))
            self.instance = instance
        }

        func sent(topic: Int, seq: UInt64, at time: ContinuousClock.Instant) {
            state.withLock { $0.sentAt[topic][seq] = time }
        }

        var acknowledged: Int { state.withLock { $0.acknowledged } }

        func resetCounts() {
            state.withLock {
                $0.acknowledged = 0
                $0.latencies.removeAll()
            }
        }

        func snapshot() -> (count: Int, latencies: [Duration], last: ContinuousClock.Instant) {
            state.withLock { ($0.acknowledged, $0.latencies, $0.last) }
        }

        func record(_ payload: [UInt8], at time: ContinuousClock.Instant) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
                let topics = object["topics"] as? [[String: Any]]
            else { return }
            state.withLock { s in
                for entry in topics where entry["instance"] as? String == instance {
                    guard let topic = entry["topic"] as? String, topic.hasPrefix("bench.t"), let t = Int(topic.dropFirst(7)), t < s.sentAt.count,
                        let ranges = entry["ranges"] as? [[NSNumber]]
                    else { continue }
                    for range in ranges where range.count == 2 {
                        for seq in range[0].uint64Value...range[1].uint64Value {
                            if let sent = s.sentAt[t].removeValue(forKey: seq) {
                                s.latencies.append(time - sent)
                                s.acknowledged += 1
                                s.last = time
                            }
                        }
                    }
                }
            }
        }
    }

    // MARK: helpers

    static func phase(_ name: String, events: Int, seconds: Double, commits: UInt64, latencies: [Duration]) -> Phase {
        let sorted = latencies.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 }.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
        return Phase(
            name: name, events: events, seconds: seconds, commits: commits, p50Ms: percentile(0.50), p99Ms: percentile(0.99), maxMs: sorted.last ?? 0)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// A base port P with P, P+1 and P+2 free on 127.0.0.1.
    static func freeBase() throws -> Int {
        guard let base = FreePorts.kernelBase() else { throw Failure(description: "no three consecutive free loopback ports found") }
        return base
    }
}
