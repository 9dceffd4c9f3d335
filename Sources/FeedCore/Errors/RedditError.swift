/// Everything that can go wrong between the feed service and Reddit, with the context a person
/// needs to act on it. ``busFailure`` maps each case to a bus status, code and message.
public enum RedditError: Error, Sendable, Equatable {
    /// The caller's input was refused before any request was made.
    case invalidInput(field: String, value: String, rule: String)
    /// The endpoint needs a signed-in user: anonymous access, a 302 from a user-only page (the
    /// logged-out subscriptions answer), or `USER_REQUIRED`.
    case signInRequired
    /// 404. `resource` names what was asked for (`r/swift`, `post 1abc1`), `reason` is Reddit's.
    case notFound(resource: String?, reason: String?)
    /// The subreddit does not exist: a 302 away from it, or an empty listing from its `about`.
    case unknownSubreddit(String?)
    /// 403 with reason `private`.
    case privateSubreddit(String?)
    /// 404 (or 403) with reason `banned`.
    case bannedSubreddit(String?)
    /// 403 for another reason (`quarantined`, `gold_only`, a blocked User-Agent, ...).
    case forbidden(reason: String?)
    /// 401: the token is bad or expired (`invalidToken` when `www-authenticate` says
    /// `error="invalid_token"`). The caller refreshes the token once and retries.
    case unauthorized(invalidToken: Bool)
    /// 403 with `www-authenticate: ... error="insufficient_scope"`: the token lacks a scope.
    case insufficientScope(scope: String?)
    /// 429 (or `RATELIMIT`); `retryAfter` in seconds when Reddit said.
    case rateLimited(retryAfter: Double?)
    /// No HTTP answer at all (refused, reset, unknown host, TLS).
    case upstreamUnreachable(String)
    /// No HTTP answer in time.
    case timeout(String)
    /// 5xx.
    case server(status: Int)
    /// A 200 whose `json.errors` is not empty.
    case apiErrors([RedditAPIError])
    /// 400 with Reddit's validation details.
    case badRequest(RedditValidationFailure)
    /// An answer that is not what the endpoint returns (HTML where JSON was expected, an
    /// unexpected status or shape); `excerpt` is the start of the body.
    case invalidResponse(status: Int, excerpt: String)

    /// True for a 401: refresh the token once and retry before reporting
    /// ``busFailure`` (`403 reddit_unauthorized`).
    public var shouldRefreshToken: Bool {
        if case .unauthorized = self { return true }
        return false
    }

    /// True when the same request may succeed later without a change (rate limits, 5xx,
    /// network trouble): the feed service may serve a cached listing instead.
    public var isTransient: Bool {
        switch self {
        case .rateLimited, .upstreamUnreachable, .timeout, .server: return true
        case .apiErrors(let errors): return errors.first?.code == "RATELIMIT"
        default: return false
        }
    }
}
