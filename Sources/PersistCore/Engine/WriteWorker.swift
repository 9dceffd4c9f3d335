import Bus
import Foundation

/// The write side: one dedicated thread owning the write connection, fed through a bounded
/// queue. Group commit: the thread takes everything queued (up to `maxBatch` events and
/// `maxBatchBytes`) and commits it in one transaction, so a burst costs one fsync per batch;
/// while it commits, the next batch gathers. No artificial delay: an event alone is committed
/// at once.
///
/// A failed commit (disk full, read-only, I/O error) is rolled back and retried with backoff,
/// the batch kept in order (on disk full, at once with half the batch, so what fits is
/// committed); producers wait when the queue is full. Nothing is reported as committed before
/// `COMMIT` returned.
final class WriteWorker: @unchecked Sendable {
    // @unchecked: every mutable field below is guarded by `condition`; the connection is
    // confined to the worker's thread.
    struct Pending {
        var event: StoredEvent
        var enqueued: ContinuousClock.Instant
    }

    typealias Job = @Sendable (PersistStore) -> Void

    struct Settings: Sendable {
        var capacity = 50_000
        var maxBatch = 5_000
        /// Payload bytes in one transaction (at least one event).
        var maxBatchBytes = 8 << 20
        var retryInitial: Duration = .milliseconds(100)
        var retryMax: Duration = .seconds(5)
        var recordLatency = false
        var retention = RetentionPolicy.standard
    }

    private let condition = NSCondition()
    private var queue: [Pending] = []
    private var head = 0
    private var jobs: [Job] = []
    private var spaceWaiters: [CheckedContinuation<Void, Never>] = []
    private var stopping = false
    private var stopped = false
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    private var stats = WriterStatistics()

    let settings: Settings
    let emit: @Sendable (EngineEvent) -> Void

    private init(settings: Settings, emit: @escaping @Sendable (EngineEvent) -> Void) {
        self.settings = settings
        self.emit = emit
        stats.queueCapacity = settings.capacity
    }

    /// Starts the thread, which opens (checks, maybe quarantines) the database; returns once it
    /// is open, or throws why it could not be.
    static func start(
        _ options: DatabaseOpener.Options, settings: Settings,
        emit: @escaping @Sendable (EngineEvent) -> Void
    ) async throws(PersistError) -> (WriteWorker, Quarantine?) {
        let worker = WriteWorker(settings: settings, emit: emit)
        let opened: Result<Quarantine?, PersistError> = await withCheckedContinuation { continuation in
            Thread.startNamed("persist.writer") {
                let store: PersistStore
                let heads: [String: SnapshotHead]
                do throws(PersistError) {
                    let result = try DatabaseOpener.open(options)
                    store = result.store
                    do throws(SQLiteError) {
                        heads = try store.snapshotHeads()
                    } catch {
                        store.close()
                        throw PersistError.sqlite(error)
                    }
                    continuation.resume(returning: .success(result.quarantine))
                } catch {
                    continuation.resume(returning: .failure(error))
                    return
                }
                worker.run(store: store, heads: heads)
            }
        }
        return (worker, try opened.get())
    }

    private var pendingCount: Int { queue.count - head }

    /// Queues an event; waits while the queue is full. Returns false once the worker stops.
    func append(_ event: StoredEvent) async -> Bool {
        let pending = Pending(event: event, enqueued: .now)
        while true {
            if let accepted = enqueue(pending) { return accepted }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                condition.lock()
                let ready = stopping || pendingCount < settings.capacity
                if !ready { spaceWaiters.append(continuation) }
                condition.unlock()
                if ready { continuation.resume() }
            }
        }
    }

    /// Queues `pending` if there is room: true, false when stopping, nil when full.
    private func enqueue(_ pending: Pending) -> Bool? {
        condition.lock()
        defer { condition.unlock() }
        if stopping { return false }
        guard pendingCount < settings.capacity else { return nil }
        queue.append(pending)
        stats.queueDepth = pendingCount
        condition.signal()
        return true
    }

    /// Runs `body` on the writer thread, between batches (compaction, limits).
    func perform<T: Sendable>(_ body: @escaping @Sendable (PersistStore) throws -> T) async throws -> T {
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            condition.lock()
            guard !stopping else {
                condition.unlock()
                continuation.resume(returning: .failure(PersistError.closed))
                return
            }
            jobs.append { store in
                do {
                    continuation.resume(returning: .success(try body(store)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            condition.signal()
            condition.unlock()
        }
        return try result.get()
    }

    var statistics: WriterStatistics {
        condition.lock()
        defer { condition.unlock() }
        var copy = stats
        copy.queueDepth = pendingCount
        return copy
    }

    /// Commits what is queued (a bounded number of attempts if writes fail), closes the
    /// connection and stops the thread.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            if stopped {
                condition.unlock()
                continuation.resume()
                return
            }
            stopping = true
            stopWaiters.append(continuation)
            let waiters = spaceWaiters
            spaceWaiters.removeAll()
            condition.signal()
            condition.unlock()
            for waiter in waiters { waiter.resume() }
        }
    }

    // MARK: the thread

    private func run(store: PersistStore, heads initialHeads: [String: SnapshotHead]) {
        var heads = initialHeads
        // The batch being written; kept, in order, until every event in it is committed.
        var carry: [Pending] = []
        // How much of `carry` the next transaction takes: all of it, halved after each
        // disk-full failure, so whatever fits is committed.
        var attemptLimit = Int.max
        var attempt = 0
        var failingSince: UInt64 = 0
        var retryAt: Date?
        var lastAutoCompact: ContinuousClock.Instant?
        var committedSinceAutoCompact = 0
        while true {
            condition.lock()
            while !stopping && jobs.isEmpty
                && (carry.isEmpty ? pendingCount == 0 : retryAt.map { Date() < $0 } ?? false)
            {
                if let retryAt { _ = condition.wait(until: retryAt) } else { condition.wait() }
            }
            let runJobs = jobs
            jobs.removeAll()
            var released: [CheckedContinuation<Void, Never>] = []
            if carry.isEmpty && pendingCount > 0 {
                var end = head
                var bytes = 0
                while end < queue.count && end - head < settings.maxBatch
                    && (end == head || bytes + queue[end].event.size <= settings.maxBatchBytes)
                {
                    bytes += queue[end].event.size
                    end += 1
                }
                carry = Array(queue[head..<end])
                head = end
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                } else if head > 4096 && head * 2 > queue.count {
                    queue.removeFirst(head)
                    head = 0
                }
                stats.queueDepth = pendingCount
                released = spaceWaiters
                spaceWaiters.removeAll()
            }
            let stop = stopping
            condition.unlock()
            for waiter in released { waiter.resume() }

            for job in runJobs { job(store) }

            let due = retryAt.map { Date() >= $0 } ?? true
            if !carry.isEmpty && (due || stop) {
                let size = min(carry.count, attemptLimit)
                let batch = Array(carry.prefix(size))
                let started = ContinuousClock.now
                do {
                    let result = try store.append(batch.map(\.event), heads: heads)
                    let committed = ContinuousClock.now
                    for (topic, head) in result.heads { heads[topic] = head }
                    let report = record(result, batch: batch, started: started, committed: committed)
                    carry.removeFirst(size)
                    committedSinceAutoCompact += size
                    retryAt = nil
                    if carry.isEmpty {
                        attemptLimit = .max
                        if attempt > 0 {
                            withLock { stats.failingSinceMicros = nil }
                            emit(.recovered(failures: attempt, failingSinceMicros: failingSince))
                            attempt = 0
                        }
                    }
                    emit(.committed(report))
                } catch {
                    attempt += 1
                    if attempt == 1 { failingSince = WallClock.microsNow() }
                    var delay = backoff(attempt)
                    if error.isFull && size > 1 {
                        // Commit what fits: retry at once with half as many events.
                        attemptLimit = size / 2
                        delay = .zero
                    }
                    retryAt = Date() + Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
                    let pending = carry.count + withLock { pendingCount }
                    withLock {
                        stats.writeErrors += 1
                        stats.lastErrorCode = error.kind
                        stats.lastError = error.description
                        stats.lastErrorMicros = WallClock.microsNow()
                        stats.failingSinceMicros = failingSince
                    }
                    emit(
                        .writeFailed(WriteFailure(error: error, attempt: attempt, pending: pending, retryIn: delay, failingSinceMicros: failingSince))
                    )
                    // Retention may free pages: try it when full, again only once something was
                    // written since (or after a minute).
                    if error.isFull,
                        lastAutoCompact == nil || committedSinceAutoCompact > 0 || ContinuousClock.now - lastAutoCompact! > .seconds(60)
                    {
                        lastAutoCompact = .now
                        committedSinceAutoCompact = 0
                        compact(store, automatic: true)
                    }
                    if stop && attempt >= 3 {
                        let lost =
                            carry.count
                            + withLock { () -> Int in
                                let n = pendingCount
                                queue.removeAll()
                                head = 0
                                return n
                            }
                        carry.removeAll()
                        emit(.abandoned(count: lost, error: error))
                    }
                }
            }
            if stop && carry.isEmpty && withLock({ pendingCount == 0 && jobs.isEmpty }) { break }
        }
        try? store.checkpoint()
        store.close()
        condition.lock()
        stopped = true
        let waiters = stopWaiters
        stopWaiters.removeAll()
        condition.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// Applies retention on the writer thread (between batches) and reports it.
    @discardableResult
    func compact(_ store: PersistStore, automatic: Bool) -> Result<CompactResult, SQLiteError> {
        do {
            let result = try store.compact(policy: settings.retention, nowMicros: WallClock.microsNow())
            withLock {
                stats.compactions += 1
                stats.lastCompact = result
                stats.lastCompactMicros = WallClock.microsNow()
            }
            emit(.compacted(result, automatic: automatic))
            return .success(result)
        } catch {
            return .failure(error)
        }
    }

    private func record(
        _ result: PersistStore.AppendResult, batch: [Pending], started: ContinuousClock.Instant,
        committed: ContinuousClock.Instant
    ) -> CommitReport {
        let now = WallClock.microsNow()
        let number: UInt64 = withLock {
            stats.commits += 1
            stats.committedEvents += UInt64(batch.count)
            stats.duplicates += UInt64(result.duplicates)
            stats.lastCommitMicros = now
            stats.lastCommitDuration = committed - started
            stats.lastBatch = batch.count
            stats.largestBatch = max(stats.largestBatch, batch.count)
            return stats.commits
        }
        return CommitReport(
            number: number, events: batch.count, inserted: result.inserted.count, duplicates: result.duplicates,
            committedMicros: now, duration: committed - started, committed: CommittedRanges.from(batch.map(\.event)),
            latencies: settings.recordLatency ? batch.map { committed - $0.enqueued } : [])
    }

    private func backoff(_ attempt: Int) -> Duration {
        var delay = settings.retryInitial
        for _ in 1..<min(attempt, 16) { delay = delay * 2 }
        return min(delay, settings.retryMax)
    }

    private func withLock<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}
