import Bus
import Foundation
import ServiceKit

/// Where the session's tokens are kept between runs.
public struct TokenStore: Sendable {
    /// The stored session, or nil.
    /// - Throws: ``SecureFileError`` when the file is readable by others (the service refuses
    ///   to start) or unreadable.
    public var load: @Sendable () throws(SecureFileError) -> StoredSession?
    public var save: @Sendable (StoredSession) throws(SecureFileError) -> Void
    public var delete: @Sendable () throws(SecureFileError) -> Void

    public init(
        load: @escaping @Sendable () throws(SecureFileError) -> StoredSession?,
        save: @escaping @Sendable (StoredSession) throws(SecureFileError) -> Void,
        delete: @escaping @Sendable () throws(SecureFileError) -> Void
    ) {
        self.load = load
        self.save = save
        self.delete = delete
    }

    /// `<state-dir>/tokens.json`, mode 0600, replaced atomically.
    public static func file(_ url: URL) -> TokenStore {
        TokenStore(
            load: { () throws(SecureFileError) -> StoredSession? in
                guard let data = try SecureFile.read(url) else { return nil }
                do {
                    return try JSONDecoder().decode(StoredSession.self, from: data)
                } catch {
                    throw .malformed(path: url.path, reason: "not a token file (\(type(of: error)))")
                }
            },
            save: { (session: StoredSession) throws(SecureFileError) in
                let data: Data
                do {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
                    data = try encoder.encode(session)
                } catch {
                    throw .malformed(path: url.path, reason: "cannot encode the session")
                }
                try SecureFile.write(data, to: url)
            },
            delete: { () throws(SecureFileError) in try SecureFile.remove(url) })
    }

    /// A store in memory, with the box tests inspect.
    public static func inMemory(_ box: TokenBox = TokenBox()) -> TokenStore {
        TokenStore(
            load: { () throws(SecureFileError) -> StoredSession? in box.value },
            save: { (session: StoredSession) throws(SecureFileError) in box.value = session },
            delete: { () throws(SecureFileError) in box.value = nil })
    }
}

/// The in-memory token store's content.
public final class TokenBox: Sendable {
    private let stored: Locked<StoredSession?>
    public init(_ value: StoredSession? = nil) { stored = Locked(value) }
    public var value: StoredSession? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
