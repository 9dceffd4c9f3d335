import Foundation

extension RedditResponse {
    /// The error this answer stands for, or nil when it carries a result.
    ///
    /// A 2xx fails only when its body is `{"json":{"errors":[...]}}` with errors in it. A 302
    /// means signed out on a user-only endpoint and an unknown subreddit on a subreddit's pages.
    /// 401, 403, 404, 429 and 5xx are told apart by Reddit's `reason` and `www-authenticate`.
    /// - Parameter endpoint: What was asked, for the meaning of a redirect and for messages.
    public func failure(for endpoint: RedditEndpoint?) -> RedditError? {
        switch status {
        case 200..<300:
            return apiErrors().map(RedditError.apiErrors)
        case 300..<400:
            if endpoint?.needsUser == true { return .signInRequired }
            if let subreddit = endpoint?.subredditName { return .unknownSubreddit(subreddit) }
            return .invalidResponse(status: status, excerpt: "redirect to \(headers["location"] ?? "(no location)")")
        case 400:
            let failure = try? JSONDecoder().decode(RedditValidationFailure.self, from: body)
            return .badRequest(failure ?? RedditValidationFailure(message: excerpt()))
        case 401:
            return .unauthorized(invalidToken: authenticateParameter("error") == "invalid_token")
        case 403:
            if authenticateParameter("error") == "insufficient_scope" {
                return .insufficientScope(scope: authenticateParameter("scope"))
            }
            switch errorBody()?.reason {
            case "private": return .privateSubreddit(endpoint?.subredditName)
            case "banned": return .bannedSubreddit(endpoint?.subredditName)
            case let reason: return .forbidden(reason: reason)
            }
        case 404:
            let reason = errorBody()?.reason
            if reason == "banned" { return .bannedSubreddit(endpoint?.subredditName) }
            return .notFound(resource: endpoint?.resource, reason: reason)
        case 429:
            return .rateLimited(retryAfter: retryAfter)
        case 500..<600:
            return .server(status: status)
        default:
            return .invalidResponse(status: status, excerpt: excerpt())
        }
    }

    /// The errors of a `{"json":{"errors":[...]}}` body, nil when there are none. Only bodies
    /// that open with the `json` key are parsed a second time.
    func apiErrors() -> [RedditAPIError]? {
        let head = String(decoding: body.prefix(32), as: UTF8.self).filter { !$0.isWhitespace }
        guard head.hasPrefix("{\"json\"") else { return nil }
        guard let envelope = try? JSONDecoder().decode(APIEnvelope<EmptyPayload>.self, from: body),
            let errors = envelope.json.errors, !errors.isEmpty
        else { return nil }
        return errors
    }

    private func errorBody() -> RedditErrorBody? {
        try? JSONDecoder().decode(RedditErrorBody.self, from: body)
    }
}
