import Foundation

/// The reducer's settings (from the command line).
public struct AuthConfig: Sendable, Equatable {
    public var provider: ProviderKind
    /// Callers (request meta `caller`) that may read the access token with `token`.
    public var tokenCallers: Set<String>
    /// How often the access token is refreshed while signed in (the seed's 30 minutes).
    public var refreshInterval: Duration
    /// How long after a failed refresh (provider down) the next try is.
    public var retryInterval: Duration
    /// Refresh at least this long before the access token expires.
    public var expiryMargin: Duration

    public init(
        provider: ProviderKind = .local, tokenCallers: Set<String> = [], refreshInterval: Duration = .seconds(1800),
        retryInterval: Duration = .seconds(60), expiryMargin: Duration = .seconds(60)
    ) {
        self.provider = provider
        self.tokenCallers = tokenCallers
        self.refreshInterval = refreshInterval
        self.retryInterval = retryInterval
        self.expiryMargin = expiryMargin
    }
}
