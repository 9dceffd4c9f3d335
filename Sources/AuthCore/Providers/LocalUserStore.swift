import Bus
import Foundation
import ServiceKit

/// The local provider's users (`<state-dir>/users.json`, mode 0600): Argon2id password hashes
/// and, per user, the digests of the tokens it issued. Tokens themselves are never stored here.
final class LocalUserStore: Sendable {
    struct IssuedTokens: Codable, Equatable {
        var refreshSHA256: String
        var refreshExpiresAt: Date
        var accessSHA256: String
        var accessExpiresAt: Date

        enum CodingKeys: String, CodingKey {
            case refreshSHA256 = "refresh_sha256"
            case refreshExpiresAt = "refresh_expires_at"
            case accessSHA256 = "access_sha256"
            case accessExpiresAt = "access_expires_at"
        }
    }

    struct User: Codable, Equatable {
        var passwordHash: String
        var createdAt: Date
        var sessions: [IssuedTokens]

        enum CodingKeys: String, CodingKey {
            case passwordHash = "password_hash"
            case createdAt = "created_at"
            case sessions
        }
    }

    struct Content: Codable, Equatable {
        var version = 1
        var users: [String: User] = [:]
    }

    /// nil: kept in memory only (tests).
    let url: URL?
    private let content: Locked<Content>

    /// Loads the file (refusing one that others may read).
    init(url: URL?) throws(SecureFileError) {
        self.url = url
        var loaded = Content()
        if let url, let data = try SecureFile.read(url) {
            do {
                loaded = try Self.decoder.decode(Content.self, from: data)
            } catch {
                throw .malformed(path: url.path, reason: "not a user file (\(type(of: error)))")
            }
        }
        content = Locked(loaded)
    }

    /// Reads under the lock.
    func read<T: Sendable>(_ body: (Content) -> T) -> T {
        content.withLock { body($0) }
    }

    /// Changes under the lock and writes the file; on a write failure the change is undone.
    func update<T: Sendable>(_ body: (inout Content) throws(ProviderFailure) -> T) throws(ProviderFailure) -> T {
        let url = self.url
        return try content.withLock { (current: inout Content) throws(ProviderFailure) -> T in
            var changed = current
            let result = try body(&changed)
            if let url {
                do {
                    try SecureFile.write(try Self.encoder.encode(changed), to: url)
                } catch let error as SecureFileError {
                    throw .storage(error.description)
                } catch {
                    throw .storage("cannot encode the user file")
                }
            }
            current = changed
            return result
        }
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.string(date))
        }
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601.date(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 date")
            }
            return date
        }
        return decoder
    }
}
