import Foundation

/// Who is signed in and with which tokens. Lives in the reducer's state and in the token
/// file; never in an event.
public struct Session: Sendable, Equatable, Codable {
    public var user: String?
    public var scopes: [String]
    public var accessToken: Secret
    /// When the access token stops working (nil: the provider did not say).
    public var expiresAt: Date?
    public var refreshToken: Secret?

    public init(user: String?, scopes: [String], accessToken: Secret, expiresAt: Date?, refreshToken: Secret?) {
        self.user = user
        self.scopes = scopes
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
    }

    /// The session a fresh grant makes.
    public init(grant: TokenGrant) {
        self.init(
            user: grant.user, scopes: grant.scopes, accessToken: grant.accessToken, expiresAt: grant.expiresAt, refreshToken: grant.refreshToken)
    }

    /// This session after a refresh: the provider may omit the refresh token (keep the old
    /// one), the scopes (unchanged) and the user (unchanged).
    public func refreshed(with grant: TokenGrant) -> Session {
        Session(
            user: grant.user ?? user, scopes: grant.scopes.isEmpty ? scopes : grant.scopes, accessToken: grant.accessToken,
            expiresAt: grant.expiresAt, refreshToken: grant.refreshToken ?? refreshToken)
    }

    /// True when the access token is still good at `date` (with `margin` to spare).
    public func isAccessValid(at date: Date, margin: TimeInterval = 0) -> Bool {
        guard let expiresAt else { return true }
        return expiresAt.timeIntervalSince(date) > margin
    }

    /// The tokens to revoke at logout, refresh token first (revoking it usually ends the
    /// access token as well).
    public var revocable: [RevocableToken] {
        var tokens: [RevocableToken] = []
        if let refreshToken { tokens.append(RevocableToken(kind: .refreshToken, token: refreshToken)) }
        tokens.append(RevocableToken(kind: .accessToken, token: accessToken))
        return tokens
    }
}

/// A token to revoke (RFC 7009) with its type hint.
public struct RevocableToken: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable { case accessToken = "access_token", refreshToken = "refresh_token" }
    public var kind: Kind
    public var token: Secret

    public init(kind: Kind, token: Secret) {
        self.kind = kind
        self.token = token
    }
}

/// What a logout could and could not revoke.
public struct RevocationReport: Sendable, Equatable, Codable {
    /// Token kinds the provider confirmed revoked (`refresh_token`, `access_token`).
    public var revoked: [String]
    /// Token kinds not revoked, with the reason.
    public var notRevoked: [String: String]

    public init(revoked: [String] = [], notRevoked: [String: String] = [:]) {
        self.revoked = revoked
        self.notRevoked = notRevoked
    }

    enum CodingKeys: String, CodingKey {
        case revoked
        case notRevoked = "not_revoked"
    }
}
