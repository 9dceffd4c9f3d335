import Bus
import Foundation

/// The storage engine of `persist`, without sockets: a write thread (group commit into
/// SQLite) and a read thread, each with its own connection, behind async methods. Nothing
/// here blocks Swift's cooperative pool.
public final class PersistEngine: Sendable {
    public struct Configuration: Sendable {
        /// The database file (`<state-dir>/persist.sqlite`).
        public var path: String
        public var durability: Durability = .full
        public var check: IntegrityCheckLevel = .full
        public var onCorrupt: CorruptionPolicy = .quarantine
        public var retention: RetentionPolicy = .standard
        /// A hard cap on the main file (SQLite `max_page_count`); past it writes fail with
        /// `disk_full` until compaction frees pages.
        public var maxDatabaseBytes: Int?
        /// Events queued for the writer before producers wait.
        public var queueCapacity = 50_000
        /// Most events in one transaction.
        public var maxBatch = 5_000
        public var retryInitial: Duration = .milliseconds(100)
        public var retryMax: Duration = .seconds(5)
        /// Report per-event commit latencies in ``CommitReport/latencies`` (the benchmark).
        public var recordLatency = false

        public init(path: String) {
            self.path = path
        }
    }

    public let configuration: Configuration
    /// Set when the database failed its start-up check and was moved aside.
    public let quarantine: Quarantine?
    /// Commits, write failures, recoveries, compactions, damaged records. Buffers the newest
    /// 10,000 when nobody reads.
    public let events: AsyncStream<EngineEvent>
    private let eventSink: AsyncStream<EngineEvent>.Continuation
    let writer: WriteWorker
    let reader: ReadWorker

    private init(
        configuration: Configuration, quarantine: Quarantine?, events: AsyncStream<EngineEvent>,
        eventSink: AsyncStream<EngineEvent>.Continuation, writer: WriteWorker, reader: ReadWorker
    ) {
        self.configuration = configuration
        self.quarantine = quarantine
        self.events = events
        self.eventSink = eventSink
        self.writer = writer
        self.reader = reader
    }

    /// Opens the database on the writer's thread: integrity check, quarantine or refusal of a
    /// damaged file, schema; then the reader.
    /// - Throws: ``PersistError/corruptDatabase(path:problems:)`` with `refuse`,
    ///   ``PersistError/sqlite(_:)`` when the file cannot be opened or written at all.
    public static func open(_ configuration: Configuration) async throws(PersistError) -> PersistEngine {
        let (events, sink) = AsyncStream<EngineEvent>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        var options = DatabaseOpener.Options(path: configuration.path)
        options.durability = configuration.durability
        options.check = configuration.check
        options.onCorrupt = configuration.onCorrupt
        if let bytes = configuration.maxDatabaseBytes { options.maxPages = max(16, bytes / 4096) }
        var settings = WriteWorker.Settings()
        settings.capacity = max(1, configuration.queueCapacity)
        settings.maxBatch = max(1, configuration.maxBatch)
        settings.retryInitial = configuration.retryInitial
        settings.retryMax = configuration.retryMax
        settings.recordLatency = configuration.recordLatency
        settings.retention = configuration.retention
        let (writer, quarantine) = try await WriteWorker.start(options, settings: settings) { sink.yield($0) }
        let reader: ReadWorker
        do {
            reader = try await ReadWorker.start(path: configuration.path)
        } catch {
            await writer.stop()
            throw error
        }
        return PersistEngine(configuration: configuration, quarantine: quarantine, events: events, eventSink: sink, writer: writer, reader: reader)
    }

    /// Queues an event for the next commit; waits while the queue is full (backpressure).
    /// Returns false when the engine is closing. Queued is not committed: see ``events``.
    @discardableResult
    public func append(_ event: StoredEvent) async -> Bool {
        await writer.append(event)
    }

    /// Applies the retention policy now (on the writer thread, between batches).
    public func compact() async throws(PersistError) -> CompactResult {
        do {
            return try await writer.perform { [writer] store in try writer.compact(store, automatic: false).get() }
        } catch {
            throw Self.wrap(error)
        }
    }

    /// Changes the file size cap (nil: none).
    public func setMaxDatabaseBytes(_ bytes: Int?) async throws(PersistError) {
        do {
            try await writer.perform { store in try store.setMaxPages(bytes.map { max(16, $0 / 4096) } ?? 1_073_741_823) }
        } catch {
            throw Self.wrap(error)
        }
    }

    /// The latest snapshot of `topic` (nil when none is stored).
    /// - Throws: ``PersistError/corruptRecord(topic:id:)`` rather than a damaged value.
    public func restore(topic: String) async throws(PersistError) -> StoredEvent? {
        try await read { try $0.snapshot(topic: topic) }
    }

    /// The snapshots of every topic under `prefix`, by topic, after `after`, at most `limit`.
    public func restore(prefix: String, after: String? = nil, limit: Int = 1000) async throws(PersistError) -> [StoredEvent] {
        try await read { try $0.snapshots(prefix: prefix, after: after, limit: limit) }
    }

    /// One page of a topic's history.
    public func history(_ query: HistoryQuery) async throws(PersistError) -> HistoryPage {
        try await read { try $0.history(query) }
    }

    /// What is stored, and the writer's counters.
    public func statistics() async throws(PersistError) -> (store: StoreStatistics, writer: WriterStatistics) {
        let store = try await read { try $0.statistics() }
        return (store, writer.statistics)
    }

    /// The writer's counters, without touching the database.
    public var writerStatistics: WriterStatistics { writer.statistics }

    /// Commits what is queued, checkpoints, closes both connections and stops the threads.
    public func close() async {
        // The reader first: the writer, closing last, checkpoints and removes the WAL.
        await reader.stop()
        await writer.stop()
        eventSink.finish()
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (PersistStore) throws -> T) async throws(PersistError) -> T {
        do {
            return try await reader.perform(body)
        } catch {
            let wrapped = Self.wrap(error)
            if case .corruptRecord = wrapped { eventSink.yield(.corruptRecord(wrapped)) }
            throw wrapped
        }
    }

    static func wrap(_ error: any Error) -> PersistError {
        switch error {
        case let error as PersistError: return error
        case let error as SQLiteError: return error.isCorruption ? .corruptDatabase(path: "", problems: [error.description]) : .sqlite(error)
        default: return .invalidArgument("\(error)")
        }
    }
}
