import Foundation

/// How thoroughly the database is checked at start.
public enum IntegrityCheckLevel: String, Sendable, CaseIterable {
    /// `PRAGMA integrity_check` and the checksum of every stored row: reads the whole file.
    case full
    /// `PRAGMA quick_check` (page structure, no index cross-check) and the snapshots' checksums.
    case quick
    /// No check (history rows are still verified when read).
    case none
}

/// What `compact` did.
public struct CompactResult: Sendable, Equatable {
    /// History events removed.
    public var deleted = 0
    /// Topics that had a retention rule.
    public var topics = 0
    /// The main file's size before and after (pages times page size).
    public var bytesBefore = 0
    public var bytesAfter = 0
}

extension PersistStore {
    /// Checks the file; returns the problems found (empty when sound). Throws only for errors
    /// that are not about the file's content (I/O, permissions).
    func verify(_ level: IntegrityCheckLevel, maxProblems: Int = 10) throws(SQLiteError) -> [String] {
        guard level != .none else { return [] }
        var problems: [String] = []
        do {
            let pragma = level == .full ? "PRAGMA integrity_check(\(maxProblems))" : "PRAGMA quick_check(\(maxProblems))"
            let rows = try connection.strings(pragma)
            if rows != ["ok"] { problems += rows.map { "integrity check: \($0)" } }
        } catch  where error.isCorruption {
            return ["integrity check: \(error)"]
        }
        var tables = ["snapshots": "SELECT event_id, \(Self.columns) FROM snapshots"]
        if level == .full { tables["events"] = "SELECT id, \(Self.columns) FROM events" }
        for (table, sql) in tables.sorted(by: { $0.key < $1.key }) where problems.count < maxProblems {
            do {
                // A new (empty) file has no tables yet.
                guard try connection.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '\(table)'") == 1 else { continue }
                let statement = try connection.statement(sql)
                defer { statement.reset() }
                while try statement.step() {
                    do {
                        _ = try Self.read(statement, idColumn: 0)
                    } catch {
                        problems.append("\(table): \(error)")
                        if problems.count >= maxProblems { break }
                    }
                }
            } catch  where error.isCorruption {
                problems.append("\(table): \(error)")
            }
        }
        return problems
    }

    /// Applies `policy` to the history: per topic, removes events older than the rule's age
    /// (by the time they were stored) and all but the rule's newest events. Snapshots stay.
    /// One transaction; then gives free pages back to the file system and truncates the WAL.
    func compact(policy: RetentionPolicy, nowMicros: UInt64) throws(SQLiteError) -> CompactResult {
        var result = CompactResult()
        result.bytesBefore = try fileBytes()
        var topics: [String] = []
        let list = try connection.statement("SELECT topic FROM snapshots ORDER BY topic")
        while try list.step() { topics.append(list.text(0)) }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let byAge = try connection.statement("DELETE FROM events WHERE topic = ?1 AND stored_us < ?2")
            let byCount = try connection.statement(
                "DELETE FROM events WHERE topic = ?1 AND id <= (SELECT id FROM events WHERE topic = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)")
            for topic in topics {
                guard let rule = policy.rule(for: topic), rule.maxAgeSeconds != nil || rule.maxEvents != nil else { continue }
                result.topics += 1
                if let age = rule.maxAgeSeconds {
                    byAge.reset()
                    try byAge.bind(1, topic)
                    try byAge.bind(2, nowMicros >= age * 1_000_000 ? nowMicros - age * 1_000_000 : 0)
                    try byAge.run()
                    result.deleted += connection.changes
                }
                if let count = rule.maxEvents {
                    byCount.reset()
                    try byCount.bind(1, topic)
                    try byCount.bind(2, count)
                    try byCount.run()
                    result.deleted += connection.changes
                }
            }
            try connection.execute("COMMIT")
        } catch {
            if connection.inTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
        if result.deleted > 0 { try connection.execute("PRAGMA incremental_vacuum") }
        try checkpoint()
        result.bytesAfter = try fileBytes()
        return result
    }

    /// Copies the WAL into the main file and truncates it.
    func checkpoint() throws(SQLiteError) {
        _ = try connection.strings("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    func fileBytes() throws(SQLiteError) -> Int {
        let pageSize = Int(try connection.integer("PRAGMA page_size") ?? 4096)
        return Int(try connection.integer("PRAGMA page_count") ?? 0) * pageSize
    }

    /// Raises or lowers the page limit (`--max-db-mb`).
    func setMaxPages(_ pages: Int) throws(SQLiteError) {
        _ = try connection.strings("PRAGMA max_page_count = \(pages)")
    }
}
