extension RedditError: CustomStringConvertible {
    /// The bus status, code and message for this error.
    ///
    /// | case | status | code |
    /// |---|---|---|
    /// | invalidInput, badRequest | 400 | bad_request |
    /// | apiErrors | 400 | reddit_api_error (403 sign_in_required for USER_REQUIRED, 503 rate_limited for RATELIMIT) |
    /// | signInRequired | 403 | sign_in_required |
    /// | unauthorized (after the one refresh) | 403 | reddit_unauthorized |
    /// | insufficientScope | 403 | insufficient_scope |
    /// | privateSubreddit | 403 | private_subreddit |
    /// | forbidden | 403 | forbidden |
    /// | notFound | 404 | not_found |
    /// | unknownSubreddit | 404 | unknown_subreddit |
    /// | bannedSubreddit | 404 | banned_subreddit |
    /// | invalidResponse | 502 | invalid_response |
    /// | rateLimited | 503 | rate_limited |
    /// | upstreamUnreachable | 503 | upstream_unreachable |
    /// | server | 503 | upstream_error |
    /// | timeout | 504 | timeout |
    public var busFailure: BusFailure {
        switch self {
        case .invalidInput(let field, let value, let rule):
            return BusFailure(status: 400, code: "bad_request", message: "invalid \(field) '\(value)': expected \(rule)")
        case .badRequest(let failure):
            return BusFailure(status: 400, code: "bad_request", message: "Reddit refused the request: \(failure)")
        case .apiErrors(let errors):
            return Self.apiFailure(errors)
        case .signInRequired:
            return BusFailure(status: 403, code: "sign_in_required", message: "this needs a signed-in Reddit user: sign in with auth first")
        case .unauthorized:
            return BusFailure(
                status: 403, code: "reddit_unauthorized", message: "Reddit refused the access token even after a refresh: sign in again")
        case .insufficientScope(let scope):
            let needed = scope.map { " (needs \($0))" } ?? ""
            return BusFailure(
                status: 403, code: "insufficient_scope", message: "the Reddit token lacks a permission\(needed): sign in again to grant it")
        case .privateSubreddit(let name):
            return BusFailure(status: 403, code: "private_subreddit", message: "\(Self.subreddit(name)) is private")
        case .forbidden(let reason):
            return BusFailure(status: 403, code: "forbidden", message: "Reddit refused access" + (reason.map { " (\($0))" } ?? ""))
        case .notFound(let resource, let reason):
            let what = resource ?? "the requested resource"
            return BusFailure(status: 404, code: "not_found", message: "Reddit has no \(what)" + (reason.map { " (\($0))" } ?? ""))
        case .unknownSubreddit(let name):
            return BusFailure(status: 404, code: "unknown_subreddit", message: "\(Self.subreddit(name)) does not exist")
        case .bannedSubreddit(let name):
            return BusFailure(status: 404, code: "banned_subreddit", message: "\(Self.subreddit(name)) is banned")
        case .invalidResponse(let status, let excerpt):
            return BusFailure(status: 502, code: "invalid_response", message: "Reddit answered \(status) with an unexpected body: \(excerpt)")
        case .rateLimited(let retryAfter):
            let wait = retryAfter.map { "retry in \(Self.seconds($0)) s" } ?? "retry later"
            return BusFailure(status: 503, code: "rate_limited", message: "Reddit rate limit reached: \(wait)")
        case .upstreamUnreachable(let detail):
            return BusFailure(status: 503, code: "upstream_unreachable", message: "Reddit is unreachable: \(detail)")
        case .server(let status):
            return BusFailure(status: 503, code: "upstream_error", message: "Reddit failed with HTTP \(status): retry later")
        case .timeout(let detail):
            return BusFailure(status: 504, code: "timeout", message: "Reddit did not answer in time: \(detail)")
        }
    }

    /// The bus message.
    public var description: String { busFailure.description }

    private static func apiFailure(_ errors: [RedditAPIError]) -> BusFailure {
        let text = errors.map(\.description).joined(separator: "; ")
        switch errors.first?.code {
        case "USER_REQUIRED":
            return BusFailure(status: 403, code: "sign_in_required", message: "Reddit needs a signed-in user: \(text)")
        case "RATELIMIT":
            return BusFailure(status: 503, code: "rate_limited", message: "Reddit rate limit reached: \(text)")
        default:
            return BusFailure(status: 400, code: "reddit_api_error", message: "Reddit refused the request: \(text)")
        }
    }

    private static func subreddit(_ name: String?) -> String {
        name.map { "r/\($0)" } ?? "the subreddit"
    }

    private static func seconds(_ value: Double) -> String {
        String(Int(value.rounded(.up)))
    }
}
