/// What the storage engine reports, each with what a person can do about it.
public enum PersistError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The database failed its integrity check at start (or is not a database at all).
    case corruptDatabase(path: String, problems: [String])
    /// One stored record failed its checksum when read; it is not served.
    case corruptRecord(topic: String, id: Int64)
    /// The database was written by a newer schema than this build knows.
    case unsupportedSchema(path: String, version: Int64)
    /// An SQLite call failed (disk full, read-only, I/O error, ...).
    case sqlite(SQLiteError)
    /// Too many queries are queued.
    case overloaded(String)
    /// The engine is closed.
    case closed
    /// A bad argument (a malformed cursor, an inverted range).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .corruptDatabase(let path, let problems):
            return "database \(path) is corrupt: \(problems.prefix(3).joined(separator: "; "))"
        case .corruptRecord(let topic, let id):
            return "stored event \(id) of '\(topic)' failed its checksum (the database file is damaged); it is not served"
        case .unsupportedSchema(let path, let version):
            return "database \(path) has schema version \(version), newer than this build understands (\(PersistStore.schemaVersion))"
        case .sqlite(let error): return error.description
        case .overloaded(let what): return what
        case .closed: return "the persist engine is closed"
        case .invalidArgument(let what): return what
        }
    }

    /// A short stable name, used as the error `code` in replies and `persist.error` events.
    public var code: String {
        switch self {
        case .corruptDatabase: return "corrupt_database"
        case .corruptRecord: return "corrupt_record"
        case .unsupportedSchema: return "unsupported_schema"
        case .sqlite(let error): return error.kind
        case .overloaded: return "overloaded"
        case .closed: return "closed"
        case .invalidArgument: return "bad_request"
        }
    }
}
