import Bus
import Foundation

/// A `history` query: one topic, optional sequence and time ranges (inclusive), paged.
public struct HistoryQuery: Sendable, Equatable {
    public var topic: String
    public var fromSeq: UInt64?
    public var toSeq: UInt64?
    /// Publisher timestamps (`time_us`), microseconds since the Unix epoch.
    public var sinceMicros: UInt64?
    public var untilMicros: UInt64?
    /// Page size, 1...1000.
    public var limit: Int
    /// The `next_cursor` of the previous page.
    public var cursor: Int64?
    /// Newest first.
    public var descending: Bool

    public static let maxLimit = 1000

    public init(
        topic: String, fromSeq: UInt64? = nil, toSeq: UInt64? = nil, sinceMicros: UInt64? = nil, untilMicros: UInt64? = nil,
        limit: Int = 100, cursor: Int64? = nil, descending: Bool = false
    ) {
        self.topic = topic
        self.fromSeq = fromSeq
        self.toSeq = toSeq
        self.sinceMicros = sinceMicros
        self.untilMicros = untilMicros
        self.limit = limit
        self.cursor = cursor
        self.descending = descending
    }
}

/// One page of history, in arrival order (or newest first); `nextCursor` is nil on the last page.
public struct HistoryPage: Sendable, Equatable {
    public var events: [StoredEvent]
    public var nextCursor: Int64?
}

/// What `stats` reports from the database itself.
public struct StoreStatistics: Sendable, Equatable {
    public var events = 0
    public var topics = 0
    public var payloadBytes = 0
    public var oldestStoredMicros: UInt64?
    public var newestStoredMicros: UInt64?
    /// The main file's size in pages times the page size.
    public var databaseBytes = 0
    /// Free pages inside the file (reused before it grows).
    public var freeBytes = 0
    /// The write-ahead log's current size.
    public var walBytes = 0
}

extension PersistStore {
    /// The latest snapshot of `topic`, checksum-verified, or nil.
    func snapshot(topic: String) throws(PersistError) -> StoredEvent? {
        do {
            let statement = try connection.statement("SELECT event_id, \(Self.columns) FROM snapshots WHERE topic = ?1")
            defer { statement.reset() }
            try statement.bind(1, topic)
            guard try statement.step() else { return nil }
            return try Self.read(statement, idColumn: 0)
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as PersistError {
            throw error
        } catch {
            throw .invalidArgument("\(error)")
        }
    }

    /// The snapshots of every topic starting with `prefix`, ordered by topic, after the topic
    /// `after` (paging), at most `limit`.
    func snapshots(prefix: String, after: String?, limit: Int) throws(PersistError) -> [StoredEvent] {
        do {
            // Topics are lowercase ASCII, so "prefix" <= topic < "prefix\u{FFFF}" is the range.
            let statement = try connection.statement(
                "SELECT event_id, \(Self.columns) FROM snapshots WHERE topic >= ?1 AND topic < ?2 AND topic > ?3 ORDER BY topic LIMIT ?4")
            defer { statement.reset() }
            try statement.bind(1, prefix)
            try statement.bind(2, prefix + "\u{7F}")
            try statement.bind(3, after ?? "")
            try statement.bind(4, limit)
            var result: [StoredEvent] = []
            while try statement.step() {
                let event = try Self.read(statement, idColumn: 0)
                if event.topic.hasPrefix(prefix) { result.append(event) }
            }
            return result
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as PersistError {
            throw error
        } catch {
            throw .invalidArgument("\(error)")
        }
    }

    /// One page of `query`.
    func history(_ query: HistoryQuery) throws(PersistError) -> HistoryPage {
        let limit = min(max(query.limit, 1), HistoryQuery.maxLimit)
        let order = query.descending ? "DESC" : "ASC"
        let cursorTest = query.descending ? "id < ?2" : "id > ?2"
        let sql = """
            SELECT id, \(Self.columns) FROM events
            WHERE topic = ?1 AND \(cursorTest) AND seq >= ?3 AND seq <= ?4 AND time_us >= ?5 AND time_us <= ?6
            ORDER BY id \(order) LIMIT ?7
            """
        do {
            let statement = try connection.statement(sql)
            defer { statement.reset() }
            try statement.bind(1, query.topic)
            try statement.bind(2, query.cursor ?? (query.descending ? Int64.max : 0))
            try statement.bind(3, Int64(clamping: query.fromSeq ?? 0))
            try statement.bind(4, Int64(clamping: query.toSeq ?? UInt64(Int64.max)))
            try statement.bind(5, Int64(clamping: query.sinceMicros ?? 0))
            try statement.bind(6, Int64(clamping: query.untilMicros ?? UInt64(Int64.max)))
            try statement.bind(7, limit + 1)
            var events: [StoredEvent] = []
            while try statement.step() {
                events.append(try Self.read(statement, idColumn: 0))
            }
            var next: Int64?
            if events.count > limit {
                events.removeLast()
                next = events.last?.id
            }
            return HistoryPage(events: events, nextCursor: next)
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as PersistError {
            throw error
        } catch {
            throw .invalidArgument("\(error)")
        }
    }

    /// Counts, sizes and ages of what is stored.
    func statistics() throws(SQLiteError) -> StoreStatistics {
        var stats = StoreStatistics()
        let totals = try connection.statement("SELECT count(*), coalesce(sum(length(payload)), 0), min(stored_us), max(stored_us) FROM events")
        defer { totals.reset() }
        if try totals.step() {
            stats.events = totals.int(0)
            stats.payloadBytes = totals.int(1)
            stats.oldestStoredMicros = totals.isNull(2) ? nil : totals.uint64(2)
            stats.newestStoredMicros = totals.isNull(3) ? nil : totals.uint64(3)
        }
        stats.topics = Int(try connection.integer("SELECT count(*) FROM snapshots") ?? 0)
        let pageSize = Int(try connection.integer("PRAGMA page_size") ?? 4096)
        stats.databaseBytes = Int(try connection.integer("PRAGMA page_count") ?? 0) * pageSize
        stats.freeBytes = Int(try connection.integer("PRAGMA freelist_count") ?? 0) * pageSize
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? NSNumber
        stats.walBytes = wal?.intValue ?? 0
        return stats
    }
}
