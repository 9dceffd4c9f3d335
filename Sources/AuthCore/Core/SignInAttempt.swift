import ServiceKit

/// An OAuth authorization request in flight: what `startSignIn` sent the user to, and what the
/// redirect must match.
public struct OAuthAttempt: Sendable, Equatable, Codable {
    /// The `state` parameter: 256 random bits, echoed by the provider in the redirect.
    public var state: String
    /// The PKCE code verifier (RFC 7636), sent only with the code exchange.
    public var verifier: Secret
    /// The redirect URI the provider sends the user back to.
    public var redirectURI: String
    /// The URL the user opens to sign in.
    public var authorizeURL: String

    public init(state: String, verifier: Secret, redirectURI: String, authorizeURL: String) {
        self.state = state
        self.verifier = verifier
        self.redirectURI = redirectURI
        self.authorizeURL = authorizeURL
    }
}

/// The sign-in that `signinInProgress` is about.
public struct PendingSignIn: Sendable, Equatable, Codable {
    public enum Method: Sendable, Equatable, Codable {
        /// Waiting for the OAuth redirect (or exchanging its code).
        case oauth(OAuthAttempt)
        /// Checking a local user's password.
        case password(username: String)
    }

    public var method: Method
    /// The request waiting for the outcome (code exchange or password check); nil while an
    /// OAuth sign-in waits for its redirect.
    public var request: RequestID?

    public init(method: Method, request: RequestID? = nil) {
        self.method = method
        self.request = request
    }

    public var username: String? {
        if case .password(let username) = method { return username }
        return nil
    }

    public var attempt: OAuthAttempt? {
        if case .oauth(let attempt) = method { return attempt }
        return nil
    }
}
