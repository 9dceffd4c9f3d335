import Bus
import ServiceKit

/// The error replies of the auth service: status, a stable code, and a message a person can
/// act on. Statuses stay within the bus's HTTP-like set (401-like failures answer 403, 502-like
/// ones 503).
public enum AuthErrors {
    public static func invalidCredentials(_ user: String) -> ServiceError {
        ServiceError(403, "invalid_credentials", "wrong password for '\(user)'")
    }

    public static func unknownUser(_ user: String) -> ServiceError {
        ServiceError(404, "unknown_user", "no user '\(user)': register first")
    }

    public static let stateMismatch = ServiceError(
        400, "state_mismatch",
        "the redirect's state parameter does not match the sign-in in progress (a forged or stale redirect); it was ignored")

    public static func providerUnavailable(_ detail: String) -> ServiceError {
        ServiceError(503, "provider_unavailable", "the identity provider is unavailable: \(detail)")
    }

    public static func providerError(_ detail: String) -> ServiceError {
        ServiceError(503, "provider_error", "the identity provider answered something unusable: \(detail)")
    }

    public static let refreshExpired = ServiceError(
        403, "refresh_expired", "the provider rejected the refresh token (expired or revoked); signed out: sign in again")

    public static func invalidGrant(_ detail: String) -> ServiceError {
        ServiceError(
            403, "invalid_grant", "the provider rejected the authorization code (expired or already used): start the sign-in again (\(detail))")
    }

    public static func authorizationDenied(_ error: String, _ description: String?) -> ServiceError {
        ServiceError(403, "authorization_denied", "the provider did not authorize the sign-in: \(error)\(description.map { " (\($0))" } ?? "")")
    }

    public static let notSignedIn = ServiceError(409, "not_signed_in", "nobody is signed in")
    public static func alreadySignedIn(_ user: String?) -> ServiceError {
        ServiceError(409, "already_signed_in", "already signed in\(user.map { " as '\($0)'" } ?? ""): logout first")
    }

    public static let busy = ServiceError(409, "busy", "a sign-in is already being completed; wait for its reply")
    public static let noSignInInProgress = ServiceError(409, "no_signin_in_progress", "no sign-in is in progress: call startSignIn first")
    public static let cancelled = ServiceError(409, "cancelled", "cancelled by logout")
    public static let signedOutMeanwhile = ServiceError(409, "signed_out", "signed out before the request could be answered")
    public static let notRefreshable = ServiceError(409, "not_refreshable", "the provider issued no refresh token for this session")
    public static let sessionExpired = ServiceError(
        403, "session_expired", "the access token expired and there is no refresh token; signed out: sign in again")

    public static func unsupported(_ detail: String) -> ServiceError {
        ServiceError(400, "unsupported", detail)
    }

    public static func invalidRedirect(_ detail: String) -> ServiceError {
        ServiceError(400, "invalid_redirect", detail)
    }

    public static func notAllowed(_ caller: String?) -> ServiceError {
        ServiceError(
            403, "forbidden",
            "\(caller.map { "'\($0)'" } ?? "a caller without a name") may not read the access token (auth --token-callers lists who may)")
    }

    public static func userExists(_ user: String) -> ServiceError {
        ServiceError(409, "user_exists", "user '\(user)' already exists")
    }

    public static func invalidRequest(_ detail: String) -> ServiceError {
        ServiceError(400, "invalid_request", detail)
    }

    public static func storage(_ detail: String) -> ServiceError {
        ServiceError(500, "storage_error", detail)
    }

    /// The reply for a provider failure. `refresh` turns a rejected grant into `refresh_expired`.
    public static func from(_ failure: ProviderFailure, refreshing: Bool = false) -> ServiceError {
        switch failure {
        case .unavailable(let why): return providerUnavailable(why)
        case .badResponse(let why): return providerError(why)
        case .rejected(let error, let text): return providerError("\(error)\(text.isEmpty ? "" : ": \(text)")")
        case .invalidGrant(let why): return refreshing ? refreshExpired : invalidGrant(why)
        case .invalidCredentials(let user): return invalidCredentials(user)
        case .unknownUser(let user): return unknownUser(user)
        case .userExists(let user): return userExists(user)
        case .invalidInput(let why): return invalidRequest(why)
        case .unsupported(let why): return unsupported(why)
        case .storage(let why): return storage(why)
        }
    }
}
