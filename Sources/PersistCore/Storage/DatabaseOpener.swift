import Foundation

/// What to do with a database that fails its check at start.
public enum CorruptionPolicy: String, Sendable, CaseIterable {
    /// Rename it (and its WAL) to `<name>.corrupt-<UTC time>`, start with an empty database
    /// and refill it from the kernel's retained values. The default: the bus keeps its state
    /// service, the damaged file is kept for inspection, and the latest state of every topic
    /// the kernel holds is back within a second.
    case quarantine
    /// Exit with the error and leave the file untouched, for an operator to inspect or repair.
    case refuse
}

/// A database moved aside because it failed its check.
public struct Quarantine: Sendable, Equatable {
    /// Where the damaged file now is.
    public var movedTo: String
    /// What the check found.
    public var problems: [String]
}

/// Opens the write connection with the start-up integrity check and the corruption policy.
enum DatabaseOpener {
    struct Options {
        var path: String
        var durability: Durability = .full
        var maxPages: Int?
        var check: IntegrityCheckLevel = .full
        var onCorrupt: CorruptionPolicy = .quarantine
    }

    static func open(_ options: Options) throws(PersistError) -> (store: PersistStore, quarantine: Quarantine?) {
        do {
            return (try attempt(options), nil)
        } catch {
            guard case .corruptDatabase(_, let problems) = error, options.onCorrupt == .quarantine else { throw error }
            let movedTo = try quarantine(options.path)
            return (try attempt(options), Quarantine(movedTo: movedTo, problems: problems))
        }
    }

    /// Opens, checks and prepares the schema; a damaged file is reported as
    /// ``PersistError/corruptDatabase(path:problems:)``, never opened as if it were sound.
    private static func attempt(_ options: Options) throws(PersistError) -> PersistStore {
        let store: PersistStore
        do {
            store = try PersistStore.openWriter(path: options.path, durability: options.durability, maxPages: options.maxPages)
        } catch {
            throw error.isCorruption ? .corruptDatabase(path: options.path, problems: [error.description]) : .sqlite(error)
        }
        do {
            let problems = try store.verify(options.check)
            if !problems.isEmpty { throw PersistError.corruptDatabase(path: options.path, problems: problems) }
            try store.prepareSchema()
        } catch {
            store.close()
            switch error {
            case let error as SQLiteError where error.isCorruption:
                throw .corruptDatabase(path: options.path, problems: [error.description])
            case PersistError.sqlite(let inner) where inner.isCorruption:
                throw .corruptDatabase(path: options.path, problems: [inner.description])
            case let error as SQLiteError:
                throw .sqlite(error)
            case let error as PersistError:
                throw error
            default:
                throw .invalidArgument("\(error)")
            }
        }
        return store
    }

    /// Renames the database and its WAL aside; removes the shared-memory index (rebuilt on open).
    static func quarantine(_ path: String) throws(PersistError) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        var target = "\(path).corrupt-\(formatter.string(from: Date()))"
        var suffix = 1
        while FileManager.default.fileExists(atPath: target) {
            suffix += 1
            target = "\(path).corrupt-\(formatter.string(from: Date()))-\(suffix)"
        }
        do {
            try FileManager.default.moveItem(atPath: path, toPath: target)
            if FileManager.default.fileExists(atPath: path + "-wal") {
                try FileManager.default.moveItem(atPath: path + "-wal", toPath: target + "-wal")
            }
            if FileManager.default.fileExists(atPath: path + "-shm") {
                try FileManager.default.removeItem(atPath: path + "-shm")
            }
        } catch {
            throw .sqlite(
                SQLiteError(
                    code: 14, operation: "quarantine \(path)", message: "cannot move the damaged database aside: \(error.localizedDescription)"))
        }
        return target
    }
}
