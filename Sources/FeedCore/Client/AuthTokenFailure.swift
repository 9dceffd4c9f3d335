import Bus

/// Why `auth token` gave no token.
public enum AuthTokenFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nobody is signed in (409 `not_signed_in`, or the session ended).
    case signedOut(String)
    /// `auth` refused this service the token (403 `forbidden`: not in `--token-callers`).
    case refused(String)
    /// `auth` did not answer (not running, timeout) or answered an unexpected error.
    case unreachable(String)

    var serviceError: ServiceError {
        switch self {
        case .signedOut(let detail):
            return ServiceError(403, "sign_in_required", "this needs a signed-in Reddit user: sign in with auth first (\(detail))")
        case .refused(let detail):
            return ServiceError(503, "token_refused", "auth refused feed the access token (run auth with --token-callers feed): \(detail)")
        case .unreachable(let detail):
            return ServiceError(503, "auth_unavailable", "auth did not hand out the access token: \(detail)")
        }
    }

    public var description: String { serviceError.description }
}
