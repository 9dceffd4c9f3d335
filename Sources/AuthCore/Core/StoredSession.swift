import Foundation

/// The token file's content (`<state-dir>/tokens.json`): the session and which provider
/// issued it.
public struct StoredSession: Sendable, Equatable, Codable {
    public static let currentVersion = 1

    public var version: Int
    public var provider: ProviderKind
    public var session: Session
    public var savedAt: Date

    public init(provider: ProviderKind, session: Session, savedAt: Date) {
        self.version = Self.currentVersion
        self.provider = provider
        self.session = session
        self.savedAt = savedAt
    }

    enum CodingKeys: String, CodingKey {
        case version, provider, user, scopes
        case accessToken = "access_token"
        case expiresAt = "expires_at"
        case refreshToken = "refresh_token"
        case savedAt = "saved_at"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        guard version == Self.currentVersion else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: c, debugDescription: "unknown token file version \(version)")
        }
        provider = try c.decode(ProviderKind.self, forKey: .provider)
        let expiresAt = try c.decodeIfPresent(String.self, forKey: .expiresAt).flatMap(ISO8601.date)
        session = Session(
            user: try c.decodeIfPresent(String.self, forKey: .user), scopes: try c.decodeIfPresent([String].self, forKey: .scopes) ?? [],
            accessToken: try c.decode(Secret.self, forKey: .accessToken), expiresAt: expiresAt,
            refreshToken: try c.decodeIfPresent(Secret.self, forKey: .refreshToken))
        savedAt = try c.decodeIfPresent(String.self, forKey: .savedAt).flatMap(ISO8601.date) ?? Date(timeIntervalSince1970: 0)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(provider, forKey: .provider)
        try c.encode(session.user, forKey: .user)
        try c.encode(session.scopes, forKey: .scopes)
        try c.encode(session.accessToken, forKey: .accessToken)
        try c.encode(session.expiresAt.map(ISO8601.string), forKey: .expiresAt)
        try c.encode(session.refreshToken, forKey: .refreshToken)
        try c.encode(ISO8601.string(savedAt), forKey: .savedAt)
    }
}
