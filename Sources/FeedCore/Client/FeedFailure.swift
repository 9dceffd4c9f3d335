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

    public var description: String { serviceError.description }
}
