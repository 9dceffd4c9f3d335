import Bus
import Foundation

/// The `persist` service: subscribes to every event, stores the retained ones through a
/// ``PersistEngine``, heals gaps from the kernel's retained store, catches up at start,
/// announces commits (`persist.committed`) and errors (`persist.error`), and answers
/// `restore`, `history`, `stats` and `compact`.
public final class PersistServer: Sendable {
    public struct Options: Sendable {
        /// Publish `persist.committed` after every commit (what the tests and the benchmark
        /// count as acknowledged).
        public var announceCommits = true
        /// Apply retention this often (nil: only on `compact` and when the disk is full).
        public var compactEvery: Duration? = .seconds(3600)
        /// Events buffered between the subscription and the ingest loop; past it events are
        /// dropped and reported as a gap, which is healed from the kernel.
        public var subscriptionBuffer = 50_000
        /// While writes fail, `persist.error` is repeated this often.
        public var errorRepeat: Duration = .seconds(10)
        public init() {}
    }

    public let bus: BusClient
    public let engine: PersistEngine
    public let options: Options
    let logger: Logger
    let startedMicros = WallClock.microsNow()
    let counters = Locked(IngestCounters())
    let healing = Locked(Set<String>())
    let resyncing = Locked(ResyncState())

    struct ResyncState {
        var busy = false
        var pending = false
        var last: ContinuousClock.Instant?
    }
    private let tasks = Locked<[Task<Void, Never>]>([])
    private let announcer = Locked<Task<Void, Never>?>(nil)

    struct IngestCounters {
        var received: UInt64 = 0
        var queued: UInt64 = 0
        var duplicatesSkipped: UInt64 = 0
        var gapsDetected: UInt64 = 0
        var missedEvents: UInt64 = 0
        var healed: UInt64 = 0
        var resyncs: UInt64 = 0
        var unattributedLosses: UInt64 = 0
        /// Kernel instances refilled with the saved values (the first at start).
        var kernelRefills: UInt64 = 0
        var subscribed = false
        var catchUpDone = false
        var catchUpValues = 0
        var corruptRecords: UInt64 = 0
        var lastErrorEvent: ContinuousClock.Instant?
    }

    public init(bus: BusClient, engine: PersistEngine, options: Options = Options(), logger: Logger) {
        self.bus = bus
        self.engine = engine
        self.options = options
        self.logger = logger
    }

    /// Subscribes to everything and starts ingesting, announcing, catching up and compacting.
    public func start() throws(BusError) {
        let subscription = try bus.subscribe([">"], bufferSize: options.subscriptionBuffer)
        if let quarantine = engine.quarantine {
            logger.error(
                "the database failed its integrity check and was moved aside; starting empty and refilling from the kernel's retained values",
                metadata: [
                    "moved_to": quarantine.movedTo, "problems": quarantine.problems.prefix(3).joined(separator: "; "),
                ])
            let message =
                "the database failed its integrity check; it was moved to \(quarantine.movedTo) and persist started empty, refilled from the kernel's retained values"
            let problems = Array(quarantine.problems.prefix(10))
            Task { [self] in
                await publishError(
                    code: "corrupt_database", message: message, operation: "open", extra: ["quarantined": quarantine.movedTo, "problems": problems])
            }
        }
        let announce = Task { [self] in await announceEngineEvents() }
        announcer.withLock { $0 = announce }
        var started = [
            Task { [self] in await ingest(subscription) }, Task { [self] in await catchUp(subscription) },
            Task { [self] in await refillNewKernels() },
        ]
        if let every = options.compactEvery {
            started.append(Task { [self] in await compactPeriodically(every: every) })
        }
        tasks.withLock { $0 = started }
    }

    /// Stops ingesting, commits what is queued, announces it and closes the database.
    public func stop() async {
        let running = tasks.withLock { list -> [Task<Void, Never>] in
            defer { list.removeAll() }
            return list
        }
        for task in running { task.cancel() }
        // Close the engine before waiting for the tasks: ingestion may be waiting for room in
        // a full queue (writes failing), and closing releases it.
        await engine.close()
        for task in running { await task.value }
        await announcer.withLock { $0 }?.value
        logger.info("database closed", metadata: ["commits": String(engine.writerStatistics.commits)])
    }

    // MARK: ingest

    private func ingest(_ subscription: BusSubscription) async {
        var gaps = GapDetector()
        for await event in subscription {
            counters.withLock { $0.received += 1 }
            guard event.meta.isRetained else {
                // Events were lost before this one; if this topic is not retained, they may
                // have been retained ones (a full buffer drops any topic): fetch them all.
                if event.missed > 0 { resync(reason: "\(event.missed) event(s) lost before one on \(event.topic)") }
                continue
            }
            let origin: EventOrigin = event.isSnapshot ? .snapshot : .live
            let verdict = gaps.record(topic: event.topic, meta: event.meta, origin: origin)
            if case .new(let missed) = verdict, missed > 0 {
                counters.withLock {
                    $0.gapsDetected += 1
                    $0.missedEvents += missed
                }
                logger.warning(
                    "gap on \(event.topic): \(missed) event(s) missed; fetching the retained value",
                    metadata: [
                        "instance": event.meta.instance, "seq": String(event.meta.seq),
                    ])
                heal(event.topic)
            } else if event.missed > 0 {
                // Lost before this event, but not on this topic as far as persist can tell.
                resync(reason: "\(event.missed) event(s) lost before one on \(event.topic)")
            }
            if verdict == .duplicate {
                counters.withLock { $0.duplicatesSkipped += 1 }
                continue
            }
            let stored = StoredEvent(received: event.topic, meta: event.meta, payload: Array(event.payload), origin: origin)
            guard await engine.append(stored) else { break }
            counters.withLock { $0.queued += 1 }
        }
    }

    /// Fetches the kernel's retained value of `topic` after a gap (one fetch per topic at a time).
    private func heal(_ topic: String) {
        guard healing.withLock({ $0.insert(topic).inserted }) else { return }
        Task { [self] in
            defer { _ = healing.withLock { $0.remove(topic) } }
            do {
                guard let value = try await bus.retained(topic, timeout: .seconds(5)) else { return }
                if await engine.append(StoredEvent(value, origin: .healed)) {
                    counters.withLock { $0.healed += 1 }
                }
            } catch {
                logger.warning("could not fetch the retained value of \(topic) after a gap", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Fetches every retained value after losses that cannot be tied to one topic. Coalesced:
    /// one re-read at a time and at most one every 5 s (a lossy high-rate feed must not turn
    /// into a stream of full re-reads); a loss during or just after one schedules one more, so
    /// the last loss is always followed by a re-read.
    private func resync(reason: String) {
        counters.withLock { $0.unattributedLosses += 1 }
        guard
            resyncing.withLock({ state in
                if state.busy {
                    state.pending = true
                    return false
                }
                state.busy = true
                return true
            })
        else { return }
        logger.warning("events were lost (\(reason)); re-reading every retained value from the kernel")
        Task { [self] in
            repeat {
                if let last = resyncing.withLock({ $0.last }) {
                    try? await Task.sleep(until: last + .seconds(5), clock: .continuous)
                }
                resyncing.withLock { $0.last = .now }
                counters.withLock { $0.resyncs += 1 }
                do {
                    let values = try await bus.retainedValues(matching: ">", timeout: .seconds(10))
                    for value in values {
                        guard await engine.append(StoredEvent(value, origin: .healed)) else { break }
                    }
                    counters.withLock { $0.healed += UInt64(values.count) }
                } catch {
                    logger.warning("could not re-read the retained values", metadata: ["error": "\(error)"])
                }
            } while resyncing.withLock({ state in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.busy = false
                return false
            })
        }
    }

    /// Waits until the subscription is live, then reads every retained value from the kernel
    /// (subscribe first, then fetch: nothing falls between), retrying until the kernel
    /// answers: what was published while `persist` was down (the latest value of each topic)
    /// is stored.
    private func catchUp(_ subscription: BusSubscription) async {
        var delay: Duration = .milliseconds(250)
        while !Task.isCancelled {
            do {
                if !counters.withLock({ $0.subscribed }) {
                    try await subscription.confirm(timeout: .seconds(5))
                    counters.withLock { $0.subscribed = true }
                }
                let values = try await bus.retainedValues(matching: ">", timeout: .seconds(5))
                for value in values {
                    guard await engine.append(StoredEvent(value, origin: .catchUp)) else { return }
                }
                counters.withLock {
                    $0.catchUpDone = true
                    $0.catchUpValues = values.count
                }
                logger.info("caught up from the kernel's retained values", metadata: ["values": String(values.count)])
                return
            } catch {
                logger.warning("cannot read the kernel's retained values yet; retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    private func compactPeriodically(every: Duration) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: every)
            if Task.isCancelled { return }
            do {
                _ = try await engine.compact()
            } catch {
                logger.error("scheduled compaction failed", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: announcements

    private func announceEngineEvents() async {
        for await event in engine.events {
            switch event {
            case .committed(let report):
                guard options.announceCommits else { continue }
                let topics: [[String: Any]] = report.committed.map { entry in
                    ["topic": entry.topic, "instance": entry.instance, "ranges": entry.ranges.map { [$0.lowerBound, $0.upperBound] }]
                }
                await publish(
                    "persist.committed",
                    [
                        "commit": report.number, "events": report.events, "inserted": report.inserted, "duplicates": report.duplicates,
                        "committed_us": report.committedMicros, "duration_us": Self.micros(report.duration), "topics": topics,
                    ])
            case .writeFailed(let failure):
                let now = ContinuousClock.now
                let due = counters.withLock { c -> Bool in
                    guard failure.attempt == 1 || c.lastErrorEvent.map({ now - $0 >= options.errorRepeat }) ?? true else { return false }
                    c.lastErrorEvent = now
                    return true
                }
                guard due else { continue }
                logger.error(
                    "cannot write to the database; retrying (events are kept in memory, the queue is bounded)",
                    metadata: [
                        "error": failure.error.description, "code": failure.error.kind, "attempt": String(failure.attempt),
                        "pending": String(failure.pending),
                    ])
                await publishError(
                    code: failure.error.kind, message: "cannot write to the database: \(failure.error)", operation: "write",
                    extra: [
                        "attempt": failure.attempt, "pending": failure.pending, "retry_in_ms": Self.micros(failure.retryIn) / 1000,
                        "failing_since_us": failure.failingSinceMicros,
                    ])
            case .recovered(let failures, let since):
                counters.withLock { $0.lastErrorEvent = nil }
                logger.notice("writes succeed again", metadata: ["failed_attempts": String(failures)])
                await publish("persist.recovered", ["failed_attempts": failures, "failing_since_us": since, "time_us": WallClock.microsNow()])
            case .compacted(let result, let automatic):
                logger.info(
                    automatic ? "compacted the history because the database is full" : "compacted the history",
                    metadata: [
                        "deleted": String(result.deleted), "bytes_before": String(result.bytesBefore), "bytes_after": String(result.bytesAfter),
                    ])
            case .corruptRecord(let error):
                counters.withLock { $0.corruptRecords += 1 }
                logger.error("a stored record is damaged and was not served", metadata: ["error": "\(error)"])
                await publishError(code: error.code, message: error.description, operation: "read", extra: [:])
            case .abandoned(let count, let error):
                logger.error("stopping with \(count) event(s) that could not be written (never acknowledged)", metadata: ["error": "\(error)"])
            }
        }
    }

    /// `persist.error` (not retained: each is an occurrence; the current health is in `stats`,
    /// and the event repeats while the condition lasts).
    func publishError(code: String, message: String, operation: String, extra: [String: any Sendable]) async {
        var body: [String: Any] = ["code": code, "message": message, "operation": operation, "time_us": WallClock.microsNow()]
        for (key, value) in extra { body[key] = value }
        await publish("persist.error", body)
    }

    /// Publishes in the caller's order (a non-retained publish only queues on the I/O thread).
    private func publish(_ topic: String, _ object: [String: Any]) async {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        do {
            try await bus.publish(topic, payload: Array(data))
        } catch {
            logger.debug("could not publish \(topic)", metadata: ["error": "\(error)"])
        }
    }

    static func micros(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }
}
