/// The SQLite synchronous mode of the write connection (`--synchronous`).
public enum Durability: String, Sendable, CaseIterable {
    /// `synchronous=FULL` with WAL: every commit fsyncs the WAL, so a committed (and announced)
    /// event survives a power loss, not only a crash of the process. Group commit makes it one
    /// fsync per batch. The default: `persist.committed` promises durability.
    case full
    /// `synchronous=NORMAL` with WAL: commits are not fsynced (checkpoints are). Survives a
    /// crash of the process, but a power loss can take back the last commits.
    case normal
}

/// Sequence numbers committed for one topic and publisher instance, as closed ranges.
public struct CommittedRanges: Sendable, Equatable {
    public var topic: String
    public var instance: String
    public var ranges: [ClosedRange<UInt64>]

    /// Groups events into sorted, merged ranges per (topic, instance), ordered by topic.
    static func from(_ events: [StoredEvent]) -> [CommittedRanges] {
        var seqs: [String: (topic: String, instance: String, seqs: [UInt64])] = [:]
        for event in events {
            let key = event.topic + "\u{0}" + event.meta.instance
            seqs[key, default: (event.topic, event.meta.instance, [])].seqs.append(event.meta.seq)
        }
        return seqs.values.sorted { ($0.topic, $0.instance) < ($1.topic, $1.instance) }.map { entry in
            var ranges: [ClosedRange<UInt64>] = []
            for seq in entry.seqs.sorted() {
                if let last = ranges.last, seq <= last.upperBound + 1 {
                    ranges[ranges.count - 1] = last.lowerBound...max(last.upperBound, seq)
                } else {
                    ranges.append(seq...seq)
                }
            }
            return CommittedRanges(topic: entry.topic, instance: entry.instance, ranges: ranges)
        }
    }
}

/// One committed batch (one transaction, one fsync in `full` mode). Created only after
/// `COMMIT` returned: what it lists is on disk.
public struct CommitReport: Sendable {
    /// Commits since the engine started.
    public var number: UInt64
    /// Events in the batch (new ones and ones already stored).
    public var events: Int
    public var inserted: Int
    public var duplicates: Int
    /// When the commit returned (microseconds since the Unix epoch).
    public var committedMicros: UInt64
    /// How long the transaction took, fsync included.
    public var duration: Duration
    /// What was committed, per topic and instance.
    public var committed: [CommittedRanges]
    /// Per event, from being queued to being committed (only with ``PersistEngine/Configuration/recordLatency``).
    public var latencies: [Duration]
}

/// A write that failed and will be retried.
public struct WriteFailure: Sendable {
    public var error: SQLiteError
    /// Consecutive failed attempts.
    public var attempt: Int
    /// Events waiting to be written (the failed batch and the queue).
    public var pending: Int
    public var retryIn: Duration
    public var failingSinceMicros: UInt64
}

/// What the engine reports as it runs.
public enum EngineEvent: Sendable {
    case committed(CommitReport)
    case writeFailed(WriteFailure)
    /// Writes succeed again after `failures` failed attempts.
    case recovered(failures: Int, failingSinceMicros: UInt64)
    case compacted(CompactResult, automatic: Bool)
    /// A read found a damaged record (it was not served).
    case corruptRecord(PersistError)
    /// Events dropped at shutdown because they could not be written (never acknowledged).
    case abandoned(count: Int, error: SQLiteError)
}

/// The write side's counters, for `stats`.
public struct WriterStatistics: Sendable, Equatable {
    public var commits: UInt64 = 0
    public var committedEvents: UInt64 = 0
    public var duplicates: UInt64 = 0
    public var lastCommitMicros: UInt64?
    public var lastCommitDuration: Duration?
    public var lastBatch = 0
    public var largestBatch = 0
    public var writeErrors: UInt64 = 0
    public var lastErrorCode: String?
    public var lastError: String?
    public var lastErrorMicros: UInt64?
    /// Set while writes fail.
    public var failingSinceMicros: UInt64?
    public var queueDepth = 0
    public var queueCapacity = 0
    public var compactions = 0
    public var lastCompact: CompactResult?
    public var lastCompactMicros: UInt64?
}
