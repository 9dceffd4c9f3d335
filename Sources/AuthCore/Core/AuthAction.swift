import Foundation
import ServiceKit

/// What happened: a request arrived, an operation finished, a timer fired. Named for the
/// event, not for what the reducer should do about it.
public enum AuthAction: Sendable, Equatable {
    /// The service started; `stored` is what the token file held (already checked to be
    /// private, or nil).
    case launched(stored: StoredSession?)
    /// `startSignIn`: the shell made the `state`, the PKCE verifier and the authorize URL.
    case signInRequested(RequestID, OAuthAttempt)
    /// `completeSignIn`: the URL the provider redirected the user's browser to.
    case redirectReceived(RequestID, redirectURL: String)
    /// `login` with the local provider.
    case loginRequested(RequestID, username: String, password: Secret)
    /// `refresh`.
    case refreshRequested(RequestID)
    /// The refresh timer fired.
    case refreshTimerFired
    /// `logout`.
    case logoutRequested(RequestID)
    /// `state`.
    case stateRequested(RequestID)
    /// `token`, with the caller named in the request meta.
    case tokenRequested(RequestID, caller: String?)
    /// The code exchange of operation `operation` finished.
    case codeExchanged(operation: Int, Result<TokenGrant, ProviderFailure>)
    /// The password check of operation `operation` finished.
    case passwordChecked(operation: Int, Result<TokenGrant, ProviderFailure>)
    /// The refresh of operation `operation` finished.
    case refreshFinished(operation: Int, Result<TokenGrant, ProviderFailure>)
    /// The revocation started by a logout finished.
    case revocationFinished(RequestID?, RevocationReport)
}
