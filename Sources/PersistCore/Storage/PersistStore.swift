import Bus
import CSQLite
import Foundation

/// The SQLite database of `persist`: an append-only history of retained events and the latest
/// snapshot of every topic. One instance per connection, used on one dedicated thread only.
///
/// Layout (schema version 1):
/// - `events`: every stored event, `id` increasing in arrival order; an event is identified by
///   (topic, instance, seq, time_us), so a value delivered twice (a live event and the kernel's
///   re-sent snapshot of it) is stored once.
/// - `snapshots`: one row per topic, the latest value by ``SnapshotRule``; a full copy, so
///   retention can remove history without touching the state.
/// - `meta`: key/value (schema version, creation time).
///
/// Every row carries a checksum (``StoredEvent/checksum``), checked on every read: a row that
/// fails it is never served.
final class PersistStore {
    static let schemaVersion: Int64 = 1
    static let columns =
        "topic, seq, time_us, flags, source, instance, content_type, correlation_id, causation_id, payload, stored_us, origin, checksum"

    let connection: SQLiteConnection
    var path: String { connection.path }

    private init(connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Opens the write connection: WAL, the durability mode, a busy timeout, and (for a new
    /// file) incremental auto-vacuum, so compaction can give space back.
    static func openWriter(path: String, durability: Durability, maxPages: Int? = nil) throws(SQLiteError) -> PersistStore {
        let connection = try SQLiteConnection(path: path)
        do throws(SQLiteError) {
            try connection.execute("PRAGMA busy_timeout = 5000")
            // auto_vacuum is only honoured before the first table exists; harmless afterwards.
            try connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
            let mode = try connection.strings("PRAGMA journal_mode = WAL").first ?? ""
            guard mode.lowercased() == "wal" else {
                throw SQLiteError(code: SQLITE_ERROR, operation: "PRAGMA journal_mode = WAL", message: "journal mode stayed '\(mode)'")
            }
            try connection.execute("PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
            if let maxPages { _ = try connection.strings("PRAGMA max_page_count = \(maxPages)") }
        } catch {
            connection.close()
            throw error
        }
        return PersistStore(connection: connection)
    }

    /// Opens a read-only connection (after the writer created the schema).
    static func openReader(path: String) throws(SQLiteError) -> PersistStore {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        do {
            try connection.execute("PRAGMA busy_timeout = 5000")
        } catch {
            connection.close()
            throw error
        }
        return PersistStore(connection: connection)
    }

    func close() {
        connection.close()
    }

    /// Creates the tables if needed and checks the schema version.
    func prepareSchema() throws(PersistError) {
        do {
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS events(
                    id INTEGER PRIMARY KEY,
                    topic TEXT NOT NULL, seq INTEGER NOT NULL, time_us INTEGER NOT NULL, flags INTEGER NOT NULL,
                    source TEXT NOT NULL, instance TEXT NOT NULL, content_type TEXT NOT NULL,
                    correlation_id TEXT NOT NULL, causation_id TEXT NOT NULL, payload BLOB NOT NULL,
                    stored_us INTEGER NOT NULL, origin INTEGER NOT NULL, checksum INTEGER NOT NULL);
                CREATE UNIQUE INDEX IF NOT EXISTS events_identity ON events(topic, instance, seq, time_us);
                CREATE INDEX IF NOT EXISTS events_topic ON events(topic, id);
                CREATE TABLE IF NOT EXISTS snapshots(
                    topic TEXT PRIMARY KEY, event_id INTEGER NOT NULL,
                    seq INTEGER NOT NULL, time_us INTEGER NOT NULL, flags INTEGER NOT NULL,
                    source TEXT NOT NULL, instance TEXT NOT NULL, content_type TEXT NOT NULL,
                    correlation_id TEXT NOT NULL, causation_id TEXT NOT NULL, payload BLOB NOT NULL,
                    stored_us INTEGER NOT NULL, origin INTEGER NOT NULL, checksum INTEGER NOT NULL);
                INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', '1');
                """)
            let insert = try connection.statement("INSERT OR IGNORE INTO meta(key, value) VALUES ('created_us', ?1)")
            try insert.bind(1, String(WallClock.microsNow()))
            try insert.run()
            let version = Int64(try connection.strings("SELECT value FROM meta WHERE key = 'schema_version'").first ?? "1") ?? 1
            if version > Self.schemaVersion { throw PersistError.unsupportedSchema(path: path, version: version) }
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as PersistError {
            throw error
        } catch {
            throw .invalidArgument("\(error)")
        }
    }

    // MARK: writing

    /// The outcome of one committed batch.
    struct AppendResult {
        /// The events newly stored, with their ids.
        var inserted: [StoredEvent] = []
        /// Events already stored (same identity); they are committed too.
        var duplicates = 0
        /// Topics whose snapshot moved, with the new head.
        var heads: [String: SnapshotHead] = [:]
        var bytes = 0
    }

    /// Stores `batch` in one transaction (one fsync in `full` mode): each new event into the
    /// history, and into the snapshot when ``SnapshotRule`` says so. `heads` is the caller's
    /// cache of snapshot heads; the result says which moved (apply it only after success).
    /// On failure nothing is stored and the transaction is rolled back.
    func append(_ batch: [StoredEvent], heads: [String: SnapshotHead]) throws(SQLiteError) -> AppendResult {
        var result = AppendResult()
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let insert = try connection.statement(
                "INSERT OR IGNORE INTO events(\(Self.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)")
            let snapshot = try connection.statement(
                "INSERT OR REPLACE INTO snapshots(\(Self.columns), event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)")
            // The rule is applied event by event; only each topic's final winner is written.
            var winners: [String: StoredEvent] = [:]
            for event in batch {
                try Self.bind(event, to: insert)
                try insert.run()
                guard connection.changes == 1 else {
                    result.duplicates += 1
                    continue
                }
                var stored = event
                stored.id = connection.lastInsertRowID
                result.inserted.append(stored)
                result.bytes += event.size
                let head = SnapshotHead(seq: event.meta.seq, flags: event.meta.flags)
                if SnapshotRule.replaces(result.heads[event.topic] ?? heads[event.topic], with: head) {
                    result.heads[event.topic] = head
                    winners[event.topic] = stored
                }
            }
            for stored in winners.values {
                try Self.bind(stored, to: snapshot)
                try snapshot.bind(14, stored.id)
                try snapshot.run()
            }
            try connection.execute("COMMIT")
        } catch {
            if connection.inTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
        return result
    }

    /// Every topic's snapshot head, to seed the writer's cache.
    func snapshotHeads() throws(SQLiteError) -> [String: SnapshotHead] {
        let statement = try connection.statement("SELECT topic, seq, flags FROM snapshots")
        var heads: [String: SnapshotHead] = [:]
        while try statement.step() {
            heads[statement.text(0)] = SnapshotHead(
                seq: statement.uint64(1), flags: EventMeta.Flags(rawValue: UInt8(truncatingIfNeeded: statement.int(2))))
        }
        return heads
    }

    static func bind(_ event: StoredEvent, to statement: SQLiteStatement) throws(SQLiteError) {
        try statement.bind(1, event.topic)
        try statement.bind(2, event.meta.seq)
        try statement.bind(3, event.meta.timestampMicros)
        try statement.bind(4, Int(event.meta.flags.rawValue))
        try statement.bind(5, event.meta.source)
        try statement.bind(6, event.meta.instance)
        try statement.bind(7, event.meta.contentType)
        try statement.bind(8, event.meta.correlationID)
        try statement.bind(9, event.meta.causationID)
        try statement.bind(10, blob: event.payload)
        try statement.bind(11, event.storedMicros)
        try statement.bind(12, event.origin.rawValue)
        try statement.bind(13, event.checksum)
    }

    /// Reads the columns of ``columns`` starting at `first`, with the row id at `idColumn`,
    /// and verifies the checksum.
    static func read(_ statement: SQLiteStatement, idColumn: Int32, first: Int32 = 1) throws(PersistError) -> StoredEvent {
        let topic = statement.text(first)
        let id = statement.int64(idColumn)
        let meta = EventMeta(
            flags: EventMeta.Flags(rawValue: UInt8(truncatingIfNeeded: statement.int(first + 3))),
            seq: statement.uint64(first + 1), timestampMicros: statement.uint64(first + 2),
            source: statement.text(first + 4), instance: statement.text(first + 5), contentType: statement.text(first + 6),
            correlationID: statement.text(first + 7), causationID: statement.text(first + 8))
        guard let origin = EventOrigin(rawValue: statement.int(first + 11)) else { throw .corruptRecord(topic: topic, id: id) }
        let event = StoredEvent(
            id: id, topic: topic, meta: meta, payload: statement.blob(first + 9), storedMicros: statement.uint64(first + 10), origin: origin)
        guard event.checksum == statement.int64(first + 12), event.meta.flags.rawValue == UInt8(truncatingIfNeeded: statement.int(first + 3)) else {
            throw .corruptRecord(topic: topic, id: id)
        }
        return event
    }

}
