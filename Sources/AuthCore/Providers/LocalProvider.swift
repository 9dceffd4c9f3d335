import Foundation
import ServiceKit

/// Users and passwords kept by the service itself, so the system runs offline: passwords
/// only as Argon2id hashes, tokens 256-bit random and opaque, stored only as SHA-256 digests,
/// refresh tokens rotated on every refresh.
public struct LocalProvider: IdentityProvider {
    public let kind = ProviderKind.local
    let users: LocalUserStore
    let hasher: PasswordHasher
    let random: RandomSource
    let clock: ServiceClock
    let accessLifetime: TimeInterval
    let refreshLifetime: TimeInterval
    let scopes: [String]
    /// Token records kept per user (the oldest are dropped beyond this).
    static let sessionsPerUser = 20

    /// - Parameters:
    ///   - usersFile: `<state-dir>/users.json`; nil keeps users in memory (tests).
    /// - Throws: ``SecureFileError`` when the user file is readable by others or unreadable.
    public init(
        usersFile: URL?, hasher: PasswordHasher, random: RandomSource, clock: ServiceClock,
        accessLifetime: Duration = .seconds(3600), refreshLifetime: Duration = .seconds(30 * 24 * 3600),
        scopes: [String] = ["identity"]
    ) throws(SecureFileError) {
        users = try LocalUserStore(url: usersFile)
        self.hasher = hasher
        self.random = random
        self.clock = clock
        self.accessLifetime = Double(accessLifetime.components.seconds)
        self.refreshLifetime = Double(refreshLifetime.components.seconds)
        self.scopes = scopes
    }

    public func register(username: String, password: Secret) async throws(ProviderFailure) {
        try Self.validate(username: username)
        try Self.validate(password: password)
        if users.read({ $0.users[username] != nil }) { throw .userExists(username) }
        let hash: String
        do {
            hash = try await hasher.hash(password)
        } catch {
            throw .storage("\(error)")
        }
        let now = clock.now()
        try users.update { (content: inout LocalUserStore.Content) throws(ProviderFailure) in
            guard content.users[username] == nil else { throw .userExists(username) }
            content.users[username] = LocalUserStore.User(passwordHash: hash, createdAt: now, sessions: [])
        }
    }

    public func signIn(username: String, password: Secret) async throws(ProviderFailure) -> TokenGrant {
        guard let hash = users.read({ $0.users[username]?.passwordHash }) else { throw .unknownUser(username) }
        guard await hasher.verify(hash, password) else { throw .invalidCredentials(user: username) }
        return try issue(for: username, replacing: nil)
    }

    public func refresh(_ refreshToken: Secret, user: String?) async throws(ProviderFailure) -> TokenGrant {
        let digest = Digest.sha256Hex(refreshToken.revealed)
        let now = clock.now()
        let owner = users.read { content in
            content.users.first { $0.value.sessions.contains { $0.refreshSHA256 == digest } }.map {
                (name: $0.key, tokens: $0.value.sessions.first { $0.refreshSHA256 == digest }!)
            }
        }
        guard let owner else { throw .invalidGrant("unknown or revoked refresh token") }
        guard owner.tokens.refreshExpiresAt > now else {
            _ = try? users.update { (content: inout LocalUserStore.Content) throws(ProviderFailure) in
                content.users[owner.name]?.sessions.removeAll { $0.refreshSHA256 == digest }
            }
            throw .invalidGrant("the refresh token expired")
        }
        return try issue(for: owner.name, replacing: digest)
    }

    public func revoke(_ tokens: [RevocableToken]) async -> RevocationReport {
        let digests = Set(tokens.map { Digest.sha256Hex($0.token.revealed) })
        do {
            try users.update { (content: inout LocalUserStore.Content) throws(ProviderFailure) in
                for name in content.users.keys {
                    content.users[name]?.sessions.removeAll { digests.contains($0.refreshSHA256) || digests.contains($0.accessSHA256) }
                }
            }
            // RFC 7009: a token that is unknown (already revoked or expired) counts as revoked.
            return RevocationReport(revoked: tokens.map(\.kind.rawValue))
        } catch {
            return RevocationReport(notRevoked: Dictionary(tokens.map { ($0.kind.rawValue, error.description) }, uniquingKeysWith: { $1 }))
        }
    }

    /// New tokens for `user`, replacing the record whose refresh digest is `replacing`.
    private func issue(for user: String, replacing: String?) throws(ProviderFailure) -> TokenGrant {
        let access = Secret(random.token())
        let refresh = Secret(random.token())
        let now = clock.now()
        let record = LocalUserStore.IssuedTokens(
            refreshSHA256: Digest.sha256Hex(refresh.revealed), refreshExpiresAt: now.addingTimeInterval(refreshLifetime),
            accessSHA256: Digest.sha256Hex(access.revealed), accessExpiresAt: now.addingTimeInterval(accessLifetime))
        try users.update { (content: inout LocalUserStore.Content) throws(ProviderFailure) in
            guard var entry = content.users[user] else { throw .unknownUser(user) }
            if let replacing {
                guard entry.sessions.contains(where: { $0.refreshSHA256 == replacing }) else {
                    throw .invalidGrant("the refresh token was revoked meanwhile")
                }
                entry.sessions.removeAll { $0.refreshSHA256 == replacing }
            }
            entry.sessions.removeAll { $0.refreshExpiresAt <= now }
            entry.sessions.append(record)
            if entry.sessions.count > Self.sessionsPerUser { entry.sessions.removeFirst(entry.sessions.count - Self.sessionsPerUser) }
            content.users[user] = entry
        }
        return TokenGrant(accessToken: access, refreshToken: refresh, expiresAt: record.accessExpiresAt, scopes: scopes, user: user)
    }

    static func validate(username: String) throws(ProviderFailure) {
        let allowed = username.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".")
        }
        guard (1...64).contains(username.utf8.count), allowed, username.first?.isLetter == true || username.first?.isNumber == true else {
            throw .invalidInput("username must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
        }
    }

    static func validate(password: Secret) throws(ProviderFailure) {
        guard (8...1024).contains(password.revealed.utf8.count) else {
            throw .invalidInput("password must be 8 to 1024 bytes long")
        }
    }
}
