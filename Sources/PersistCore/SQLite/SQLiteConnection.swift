import CSQLite
import Foundation

/// One SQLite connection. Not thread-safe and not `Sendable`: a connection is opened, used and
/// closed on one dedicated thread (SQLite calls block on disk I/O and must stay off Swift's
/// cooperative pool). Every call goes through ``check(_:_:)``, which throws an
/// ``SQLiteError`` keeping the codes, the operation and SQLite's message.
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    let path: String
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens (and with `create`, creates) the database at `path`.
    init(path: String, readOnly: Bool = false, create: Bool = true) throws(SQLiteError) {
        self.path = path
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE
        if readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if create { flags |= SQLITE_OPEN_CREATE }
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        if rc != SQLITE_OK {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, operation: "open \(path)", message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        assert(handle == nil, "SQLiteConnection to \(path) was not closed")
    }

    /// Finalizes every cached statement and closes the connection.
    func close() {
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Throws when `rc` is not one of `accept`.
    @discardableResult
    func check(_ rc: Int32, _ operation: @autoclosure () -> String, accept: Set<Int32> = [SQLITE_OK]) throws(SQLiteError) -> Int32 {
        if accept.contains(rc) { return rc }
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        throw SQLiteError(code: rc, extendedCode: handle.map { sqlite3_extended_errcode($0) } ?? rc, operation: operation(), message: message)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(error)
            throw SQLiteError(
                code: rc, extendedCode: handle.map { sqlite3_extended_errcode($0) } ?? rc, operation: "execute \(Self.short(sql))", message: message)
        }
    }

    /// A prepared statement, cached by its SQL text and reset before it is handed out.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil), "prepare \(Self.short(sql))")
        let statement = SQLiteStatement(raw!, connection: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs a query and returns the first column of every row as text (for PRAGMAs).
    func strings(_ sql: String) throws(SQLiteError) -> [String] {
        let statement = try self.statement(sql)
        var rows: [String] = []
        while try statement.step() { rows.append(statement.text(0)) }
        return rows
    }

    /// Runs a query and returns the first column of the first row as an integer.
    func integer(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    static func short(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.count > 60 ? String(flat.prefix(57)) + "..." : flat
    }
}

/// A prepared statement of a ``SQLiteConnection``; parameters are 1-based, columns 0-based.
final class SQLiteStatement {
    private var raw: OpaquePointer?
    unowned let connection: SQLiteConnection
    let sql: String

    /// SQLite copies bound text and blobs (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ raw: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.raw = raw
        self.connection = connection
        self.sql = sql
    }

    func finalize() {
        sqlite3_finalize(raw)
        raw = nil
    }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    private func bindCheck(_ rc: Int32, _ index: Int32) throws(SQLiteError) {
        try connection.check(rc, "bind parameter \(index) of \(SQLiteConnection.short(sql))")
    }

    func bind(_ index: Int32, _ value: Int64) throws(SQLiteError) {
        try bindCheck(sqlite3_bind_int64(raw, index, value), index)
    }

    func bind(_ index: Int32, _ value: Int) throws(SQLiteError) { try bind(index, Int64(value)) }

    func bind(_ index: Int32, _ value: UInt64) throws(SQLiteError) { try bind(index, Int64(bitPattern: value)) }

    func bind(_ index: Int32, _ value: String) throws(SQLiteError) {
        try bindCheck(sqlite3_bind_text(raw, index, value, -1, Self.transient), index)
    }

    func bind(_ index: Int32, blob value: [UInt8]) throws(SQLiteError) {
        let rc = value.withUnsafeBytes { buffer in
            // A zero-length blob still needs a non-nil pointer or SQLite binds NULL.
            sqlite3_bind_blob(raw, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), Self.transient)
        }
        try bindCheck(rc, index)
    }

    func bindNull(_ index: Int32) throws(SQLiteError) {
        try bindCheck(sqlite3_bind_null(raw, index), index)
    }

    /// Steps once: true when a row is ready, false when done.
    @discardableResult
    func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(raw)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE {
            // Ends the statement's implicit read transaction at once, so no WAL snapshot
            // stays pinned (which would stop checkpoints).
            sqlite3_reset(raw)
            return false
        }
        let error = SQLiteError(
            code: rc, extendedCode: sqlite3_extended_errcode(connection.handle),
            operation: "step \(SQLiteConnection.short(sql))", message: String(cString: sqlite3_errmsg(connection.handle)))
        sqlite3_reset(raw)
        throw error
    }

    /// Steps to completion (for statements without rows).
    func run() throws(SQLiteError) {
        while try step() {}
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }
    func uint64(_ column: Int32) -> UInt64 { UInt64(bitPattern: sqlite3_column_int64(raw, column)) }
    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(raw, column)) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(raw, column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(raw, column) else { return "" }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func blob(_ column: Int32) -> [UInt8] {
        guard let pointer = sqlite3_column_blob(raw, column) else { return [] }
        let count = Int(sqlite3_column_bytes(raw, column))
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
