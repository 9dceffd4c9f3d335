import Foundation

/// The payload of the retained `auth.state` event and of the `state` reply: who is signed in
/// and until when. It has no field that can hold a token.
///
/// ```json
/// {"state": "authenticated", "user": "alice", "scopes": ["identity", "read"],
///  "expires_at": "2025-01-01T12:00:00Z", "reason": null, "provider": "oauth"}
/// ```
public struct AuthSnapshot: Sendable, Equatable, Codable {
    public var state: AuthPhase
    public var user: String?
    public var scopes: [String]
    /// When the current access token expires.
    public var expiresAt: Date?
    /// Why the state is what it is: for `signedOut` the failure or `logout`; for `refreshing`
    /// what started it (`scheduled`, `requested`, `restored`, `expired`, `retry`); for
    /// `authenticated` after a failed refresh, that failure; otherwise null.
    public var reason: String?
    public var provider: ProviderKind

    public init(state: AuthPhase, user: String? = nil, scopes: [String] = [], expiresAt: Date? = nil, reason: String? = nil, provider: ProviderKind) {
        self.state = state
        self.user = user
        self.scopes = scopes
        self.expiresAt = expiresAt
        self.reason = reason
        self.provider = provider
    }

    enum CodingKeys: String, CodingKey {
        case state, user, scopes, reason, provider
        case expiresAt = "expires_at"
    }

    // Null fields are written out, so every reader sees the same keys in every state.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(user, forKey: .user)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(expiresAt.map(ISO8601.string), forKey: .expiresAt)
        try container.encode(reason, forKey: .reason)
        try container.encode(provider, forKey: .provider)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        state = try container.decode(AuthPhase.self, forKey: .state)
        user = try container.decodeIfPresent(String.self, forKey: .user)
        scopes = try container.decodeIfPresent([String].self, forKey: .scopes) ?? []
        expiresAt = try container.decodeIfPresent(String.self, forKey: .expiresAt).flatMap(ISO8601.date)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        provider = try container.decode(ProviderKind.self, forKey: .provider)
    }
}

/// Dates on the wire and on disk: ISO 8601 in UTC, whole seconds.
public enum ISO8601 {
    public static func string(_ date: Date) -> String {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)).formatted(.iso8601)
    }

    public static func date(_ text: String) -> Date? {
        try? Date.ISO8601FormatStyle().parse(text)
    }
}
