import CSQLite

/// A failed SQLite call: the primary and extended result codes, the call that failed and
/// SQLite's own message, so a log line says what broke and where.
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_FULL`, `SQLITE_CORRUPT`, ...).
    public var code: Int32
    /// The extended result code (`SQLITE_IOERR_FSYNC`, ...).
    public var extendedCode: Int32
    /// What was being done (`sqlite3_step(INSERT INTO events ...)`, `open`, ...).
    public var operation: String
    public var message: String

    public init(code: Int32, extendedCode: Int32? = nil, operation: String, message: String) {
        self.code = code & 0xFF
        self.extendedCode = extendedCode ?? code
        self.operation = operation
        self.message = message
    }

    /// The database file is damaged or is not a database.
    public var isCorruption: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }
    /// The disk (or the configured page limit) is full.
    public var isFull: Bool { code == SQLITE_FULL }
    /// The file or its folder cannot be written.
    public var isReadOnly: Bool { code == SQLITE_READONLY || code == SQLITE_PERM || code == SQLITE_CANTOPEN }

    /// A short stable name for the condition, used as the error `code` on the bus.
    public var kind: String {
        if isCorruption { return "corrupt_database" }
        if isFull { return "disk_full" }
        if isReadOnly { return "read_only" }
        if code == SQLITE_IOERR { return "io_error" }
        if code == SQLITE_BUSY || code == SQLITE_LOCKED { return "busy" }
        return "sqlite_error"
    }

    public var description: String {
        let name = String(cString: sqlite3_errstr(extendedCode))
        return "\(operation): \(message) (\(name), code \(extendedCode))"
    }
}
