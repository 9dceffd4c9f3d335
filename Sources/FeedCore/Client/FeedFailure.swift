import Bus

/// Why a feed call failed: Reddit's typed error, or `auth` not handing out a token.
public enum FeedFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Reddit refused or could not be reached (FeedCore's typed errors).
    case reddit(RedditError)
    /// `auth` did not give a token: it is unreachable, refused this caller, or nobody is signed in.
    case auth(AuthTokenFailure)

    /// The bus status, code and message this failure is answered with.
    public var serviceError: ServiceError {
        switch self {
        case .reddit(let error):
            let failure = error.busFailure
            return ServiceError(failure.status, failure.code, failure.message)
        case .auth(let failure):
            return failure.serviceError
        }
    }

    /// True when a stored value may stand in for the answer: Reddit (or `auth`) cannot be
    /// reached or is overloaded, and the same call may succeed later unchanged.
    public var isTransient: Bool {
        switch self {
        case .reddit(let error): return error.isTransient
        case .auth(.unreachable): return true
        case .auth: return false
        }
    }

    /// True when nobody is signed in (as Reddit or `auth` says).
    public var isSignedOut: Bool {
        switch self {
        case .reddit(let error): return error == .signInRequired
        case .auth(.signedOut): return true
        case .auth: return false
        }
    }

    public var description: String { serviceError.description }

    /// The failure an effect's error stands for (a cancellation never gets here).
    public init(_ error: any Error) {
        switch error {
        case let failure as FeedFailure: self = failure
        case let error as RedditError: self = .reddit(error)
        default: self = .reddit(.invalidResponse(status: 0, excerpt: "\(error)"))
        }
    }
}

/// Why `auth token` gave no token.
public enum AuthTokenFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nobody is signed in (409 `not_signed_in`, or the session ended).
    case signedOut(String)
    /// `auth` refused this service the token (403 `forbidden`: not in `--token-callers`).
    case refused(String)
    /// `auth` did not answer (not running, timeout) or answered an unexpected error.
    case unreachable(String)

    /// The detail auth (or the bus) gave.
    public var detail: String {
        switch self {
        case .signedOut(let detail), .refused(let detail), .unreachable(let detail): return detail
        }
    }

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
