/// Why a weather provider call failed, with the bus status and code the service replies with.
///
/// Messages name the provider and never contain an API key: every text that may come from a
/// URL or a body goes through ``Redaction``.
public enum WeatherUpstreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No HTTP answer: refused, reset, unknown host, TLS failure. `detail` says which.
    case unreachable(WeatherProvider, detail: String)
    /// No answer within the request's time limit.
    case timeout(WeatherProvider)
    /// HTTP 429. `retryAfter` is the provider's `Retry-After` in seconds, when it sent one.
    case rateLimited(WeatherProvider, retryAfter: Int?)
    /// The provider rejected the API key (HTTP 401/403).
    case upstreamAuth(WeatherProvider, message: String)
    /// The provider has no such place (HTTP 404).
    case notFound(WeatherProvider, message: String)
    /// The provider refused the request's parameters (HTTP 400), with its reason.
    case badRequest(WeatherProvider, reason: String)
    /// The provider failed (5xx) or answered a status it does not document.
    case server(WeatherProvider, status: Int)
    /// The answer is not what the provider documents: not JSON, missing fields, arrays of
    /// different lengths. `detail` says what, with a short excerpt of the body.
    case invalidResponse(WeatherProvider, detail: String)

    /// The provider the failed call went to.
    public var provider: WeatherProvider {
        switch self {
        case .unreachable(let p, _), .timeout(let p), .rateLimited(let p, _), .upstreamAuth(let p, _), .notFound(let p, _),
            .badRequest(let p, _), .server(let p, _), .invalidResponse(let p, _):
            return p
        }
    }

    /// The status of the bus error reply.
    public var status: Int {
        switch self {
        case .unreachable: return 503
        case .timeout: return 504
        case .rateLimited: return 503
        case .upstreamAuth: return 502
        case .notFound: return 404
        case .badRequest: return 400
        case .server: return 502
        case .invalidResponse: return 502
        }
    }

    /// The code of the bus error reply.
    public var code: String {
        switch self {
        case .unreachable: return "upstream_unreachable"
        case .timeout: return "timeout"
        case .rateLimited: return "rate_limited"
        case .upstreamAuth: return "upstream_auth"
        case .notFound: return "not_found"
        case .badRequest: return "bad_request"
        case .server: return "upstream_error"
        case .invalidResponse: return "invalid_response"
        }
    }

    /// True for failures that may go away by themselves, where serving a cached forecast
    /// (marked stale) is the right answer.
    public var isTransient: Bool {
        switch self {
        case .unreachable, .timeout, .rateLimited, .server, .invalidResponse: return true
        case .upstreamAuth, .notFound, .badRequest: return false
        }
    }

    public var description: String {
        let name = provider.displayName
        let text: String
        switch self {
        case .unreachable(_, let detail):
            text = "\(name) is unreachable: \(detail)"
        case .timeout:
            text = "\(name) did not answer in time"
        case .rateLimited(_, let retryAfter):
            text = "\(name) is rate limiting this service" + (retryAfter.map { ": retry after \($0) s" } ?? ": retry later")
        case .upstreamAuth(_, let message):
            text = message
        case .notFound(_, let message):
            text = "\(name) has no such place: \(message)"
        case .badRequest(_, let reason):
            text = "\(name) refused the request: \(reason)"
        case .server(_, let status):
            text = "\(name) answered HTTP \(status)"
        case .invalidResponse(_, let detail):
            text = "\(name) sent an invalid response: \(detail)"
        }
        return Redaction.redact(text)
    }
}
