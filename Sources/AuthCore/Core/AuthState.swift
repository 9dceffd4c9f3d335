import Foundation
import ServiceKit

/// The reducer's state: the phase and everything needed to leave it legally. `Codable` as every
/// feature state is; it is never published or persisted as a whole (it holds the tokens): only
/// its ``snapshot(provider:)`` is, as `auth.state`.
public struct AuthState: Sendable, Equatable, Codable {
    public var phase: AuthPhase = .signedOut
    /// The signed-in session (`authenticated` and `refreshing` only).
    public var session: Session?
    /// The sign-in being made (`signinInProgress` only).
    public var pending: PendingSignIn?
    /// In `signedOut` after a refresh failed for a transient reason (provider down) with an
    /// expired access token: the session kept so a retry (timer or `refresh`) can resume it.
    public var resumable: Session?
    /// See ``AuthSnapshot/reason``.
    public var reason: String?
    /// The asynchronous operation whose result the state waits for (code exchange, password
    /// check, refresh); results of any other operation are stale and dropped.
    public var operation: Int?
    public var nextOperation = 1
    /// Requests waiting for the refresh in flight.
    public var refreshWaiters: [RequestID] = []
    /// `token` requests waiting for the refresh in flight.
    public var tokenWaiters: [RequestID] = []
    /// Set by `launched`; the first and only start.
    public var launched = false

    public init() {}

    /// What `auth.state` says about this state.
    public func snapshot(provider: ProviderKind) -> AuthSnapshot {
        switch phase {
        case .signedOut:
            return AuthSnapshot(state: .signedOut, reason: reason, provider: provider)
        case .signinInProgress:
            return AuthSnapshot(state: .signinInProgress, user: pending?.username, reason: reason, provider: provider)
        case .authenticated, .refreshing:
            return AuthSnapshot(
                state: phase, user: session?.user, scopes: session?.scopes ?? [], expiresAt: session?.expiresAt, reason: reason,
                provider: provider)
        }
    }

    /// Broken invariants of the phase (empty when the state is legal).
    public var violations: [String] {
        var problems: [String] = []
        func require(_ condition: Bool, _ text: String) { if !condition { problems.append("\(phase): \(text)") } }
        let waiting = !refreshWaiters.isEmpty || !tokenWaiters.isEmpty
        switch phase {
        case .signedOut:
            require(session == nil, "has a session")
            require(pending == nil, "has a pending sign-in")
            require(operation == nil, "has an operation in flight")
            require(!waiting, "has waiting requests")
        case .signinInProgress:
            require(pending != nil, "has no pending sign-in")
            require(session == nil, "has a session")
            require((operation != nil) == (pending?.request != nil), "operation and waiting request disagree")
            require(!waiting, "has refresh waiters")
        case .authenticated:
            require(session != nil, "has no session")
            require(pending == nil, "has a pending sign-in")
            require(resumable == nil, "has a resumable session")
            require(operation == nil, "has an operation in flight")
            require(!waiting, "has waiting requests")
        case .refreshing:
            require(session?.refreshToken != nil, "has no refresh token")
            require(pending == nil, "has a pending sign-in")
            require(resumable == nil, "has a resumable session")
            require(operation != nil, "has no refresh in flight")
        }
        return problems
    }
}
