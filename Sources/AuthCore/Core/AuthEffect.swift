import Bus
import Foundation
import ServiceKit

/// What the reducer asks the shell to do. The shell runs them in order; operations report
/// back with an ``AuthAction``.
public enum AuthEffect: Sendable, Equatable {
    /// Publish the new state as the retained `auth.state`.
    case publish(AuthSnapshot)
    /// Answer a waiting request.
    case reply(RequestID, AuthReply)
    /// Exchange an authorization code; report ``AuthAction/codeExchanged(operation:_:)``.
    case exchangeCode(operation: Int, code: String, attempt: OAuthAttempt)
    /// Check a local password; report ``AuthAction/passwordChecked(operation:_:)``.
    case checkPassword(operation: Int, username: String, password: Secret)
    /// Refresh; report ``AuthAction/refreshFinished(operation:_:)``.
    case refresh(operation: Int, refreshToken: Secret, user: String?)
    /// Revoke tokens; report ``AuthAction/revocationFinished(_:_:)`` for `request` (nil: nobody
    /// waits, e.g. tokens of a superseded session).
    case revoke(RequestID?, [RevocableToken])
    /// Write the token file.
    case saveSession(Session)
    /// Remove the token file.
    case deleteSession
    /// (Re)arm the refresh timer.
    case scheduleRefresh(after: Duration)
    case cancelRefreshTimer
}

/// The answer to a request.
public enum AuthReply: Sendable, Equatable {
    /// `startSignIn`.
    case authorizeURL(String)
    /// `completeSignIn`, `login`, `refresh`, `state`.
    case state(AuthSnapshot)
    /// `token`.
    case token(Secret, expiresAt: Date?, user: String?)
    /// `logout`.
    case loggedOut(AuthSnapshot, RevocationReport)
    /// An error reply.
    case failure(ServiceError)
}
