import Foundation

/// Which identity provider the service runs with (`--provider`).
public enum ProviderKind: String, Sendable, Codable, CaseIterable {
    /// Users and passwords kept by the service itself: works offline (the embedded default).
    case local
    /// An OAuth 2.0 authorization server (authorization code + PKCE).
    case oauth
}

/// Tokens a provider issued.
public struct TokenGrant: Sendable, Equatable {
    public var accessToken: Secret
    public var refreshToken: Secret?
    public var expiresAt: Date?
    /// Granted scopes; empty when the provider did not say (then the requested ones apply).
    public var scopes: [String]
    /// The signed-in user's name, when the provider tells it.
    public var user: String?

    public init(accessToken: Secret, refreshToken: Secret?, expiresAt: Date?, scopes: [String], user: String?) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.scopes = scopes
        self.user = user
    }
}

/// Why a provider call failed, in terms the reducer turns into a state and an error reply.
public enum ProviderFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider could not be reached, timed out, or said it is unavailable (502/503/504).
    case unavailable(String)
    /// The provider answered something that is not a valid response (not JSON, no token, ...).
    case badResponse(String)
    /// The provider rejected the authorization code or the refresh token (`invalid_grant`):
    /// expired, revoked or already used.
    case invalidGrant(String)
    /// Another OAuth error response (`invalid_client`, `invalid_scope`, ...): configuration.
    case rejected(error: String, description: String)
    /// A local user's password did not match.
    case invalidCredentials(user: String)
    /// No local user of that name.
    case unknownUser(String)
    /// `register` of a name that is taken.
    case userExists(String)
    /// A malformed username or password.
    case invalidInput(String)
    /// The provider does not do this (`login` with OAuth, `startSignIn` with the local one).
    case unsupported(String)
    /// The provider's own storage failed (the local user file).
    case storage(String)

    /// A short code for logs and for `auth.state`'s `reason`.
    public var code: String {
        switch self {
        case .unavailable: return "provider_unavailable"
        case .badResponse: return "provider_error"
        case .invalidGrant: return "invalid_grant"
        case .rejected: return "provider_error"
        case .invalidCredentials: return "invalid_credentials"
        case .unknownUser: return "unknown_user"
        case .userExists: return "user_exists"
        case .invalidInput: return "invalid_request"
        case .unsupported: return "unsupported"
        case .storage: return "storage_error"
        }
    }

    /// True for failures that may go away by themselves (retrying makes sense).
    public var isTransient: Bool {
        switch self {
        case .unavailable, .badResponse, .rejected, .storage: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .unavailable(let why): return "the identity provider is unavailable: \(why)"
        case .badResponse(let why): return "the identity provider answered garbage: \(why)"
        case .invalidGrant(let why): return "the identity provider rejected the grant: \(why)"
        case .rejected(let error, let text): return "the identity provider refused the request: \(error)\(text.isEmpty ? "" : " (\(text))")"
        case .invalidCredentials(let user): return "wrong password for '\(user)'"
        case .unknownUser(let user): return "no user '\(user)'"
        case .userExists(let user): return "user '\(user)' already exists"
        case .invalidInput(let why): return why
        case .unsupported(let why): return why
        case .storage(let why): return "the user store failed: \(why)"
        }
    }
}

/// An identity provider: how users sign in and how tokens are refreshed and revoked. Each
/// provider implements what it supports; the rest throws ``ProviderFailure/unsupported(_:)``.
public protocol IdentityProvider: Sendable {
    var kind: ProviderKind { get }

    /// OAuth: the authorization request for a new sign-in with this `state` and PKCE verifier.
    func beginSignIn(state: String, verifier: Secret) throws(ProviderFailure) -> OAuthAttempt
    /// OAuth: exchanges the authorization code from the redirect for tokens.
    func exchange(code: String, attempt: OAuthAttempt) async throws(ProviderFailure) -> TokenGrant
    /// Local: creates a user.
    func register(username: String, password: Secret) async throws(ProviderFailure)
    /// Local: checks a password and issues tokens.
    func signIn(username: String, password: Secret) async throws(ProviderFailure) -> TokenGrant
    /// Trades a refresh token for a new access token (and maybe a new refresh token).
    func refresh(_ refreshToken: Secret, user: String?) async throws(ProviderFailure) -> TokenGrant
    /// Revokes what it can; never throws, the report says what was not revoked and why.
    func revoke(_ tokens: [RevocableToken]) async -> RevocationReport
}

extension IdentityProvider {
    public func beginSignIn(state: String, verifier: Secret) throws(ProviderFailure) -> OAuthAttempt {
        throw .unsupported("the \(kind.rawValue) provider has no browser sign-in: use `login` with a username and password")
    }

    public func exchange(code: String, attempt: OAuthAttempt) async throws(ProviderFailure) -> TokenGrant {
        throw .unsupported("the \(kind.rawValue) provider has no browser sign-in: use `login` with a username and password")
    }

    public func register(username: String, password: Secret) async throws(ProviderFailure) {
        throw .unsupported("the \(kind.rawValue) provider has no local users: sign in with `startSignIn` and `completeSignIn`")
    }

    public func signIn(username: String, password: Secret) async throws(ProviderFailure) -> TokenGrant {
        throw .unsupported("the \(kind.rawValue) provider has no local users: sign in with `startSignIn` and `completeSignIn`")
    }
}
