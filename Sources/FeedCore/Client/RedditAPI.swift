import Foundation
import ServiceKit

/// The Reddit client of the feed service: FeedCore's endpoints sent over an ``HTTPClient``,
/// with the user's token from `auth` (or anonymously), under the rate-limit budget.
///
/// - A signed-in call asks `auth` for the token and sends `Authorization: bearer` to the OAuth
///   host; a 401 makes it ask `auth` to refresh, take the token again and retry once. A second
///   401 (or the same token back) is ``RedditError/unauthorized(invalidToken:)``, answered
///   403 `reddit_unauthorized`. Concurrent 401s share one refresh (``TokenRefresher``).
/// - No request leaves past the budget Reddit's `x-ratelimit-*` headers describe: it waits up
///   to ``RedditSettings/maxRateLimitWait`` for the window to free up, else it fails
///   ``RedditError/rateLimited(retryAfter:)`` (503 `rate_limited`) without being sent.
public struct RedditAPI: Sendable {
    let http: HTTPClient
    let tokens: AuthTokens
    let settings: RedditSettings
    let clock: ServiceClock
    private let limiter = RateLimiter()
    private let refresher = TokenRefresher()

    public init(http: HTTPClient, tokens: AuthTokens, settings: RedditSettings = RedditSettings(), clock: ServiceClock = .live) {
        self.http = http
        self.tokens = tokens
        self.settings = settings
        self.clock = clock
    }

    /// Reddit's answer to `endpoint`: with the user's token when `signedIn`, else anonymous.
    /// A read that finds nobody signed in at `auth` goes out anonymously instead.
    /// - Throws: ``FeedFailure``: bad input, the budget spent, no answer, no token.
    public func response(_ endpoint: RedditEndpoint, signedIn: Bool) async throws(FeedFailure) -> RedditResponse {
        guard signedIn else { return try await send(endpoint, access: .anonymous) }
        let token: String
        do {
            token = try await tokens.token()
        } catch .signedOut(let detail) {
            if endpoint.needsUser { throw .auth(.signedOut(detail)) }
            return try await send(endpoint, access: .anonymous)
        } catch {
            throw .auth(error)
        }
        let first = try await send(endpoint, access: .oauth(token: token))
        guard first.status == 401 else { return first }
        let second: String
        switch await refresher.token(replacing: token, from: tokens) {
        case .success(let renewed): second = renewed
        case .failure(let error): throw .auth(error)
        }
        guard second != token else { return first }
        return try await send(endpoint, access: .oauth(token: second))
    }

    /// Sends one request under the budget of its access mode.
    func send(_ endpoint: RedditEndpoint, access: RedditAccess) async throws(FeedFailure) -> RedditResponse {
        let spec: HTTPRequestSpec
        do {
            spec = try settings.builder(access).request(for: endpoint)
        } catch {
            throw .reddit(error)
        }
        let isOAuth = access != .anonymous
        try await reserve(oauth: isOAuth)
        let answer: HTTPResponse
        do {
            answer = try await http.send(HTTPRequest(method: spec.method, url: spec.url, headers: spec.headers, body: spec.body))
        } catch {
            await limiter.recordNoAnswer(oauth: isOAuth, now: clock.now())
            throw .reddit(error.timedOut ? .timeout(error.message) : .upstreamUnreachable(error.message))
        }
        await limiter.record(oauth: isOAuth, headers: answer.headers, status: answer.status, now: clock.now())
        return RedditResponse(status: answer.status, headers: answer.headers, body: answer.body)
    }

    /// Waits for the budget (at most the configured wait), or refuses.
    private func reserve(oauth isOAuth: Bool) async throws(FeedFailure) {
        let started = clock.now()
        while true {
            let now = clock.now()
            switch await limiter.reserve(oauth: isOAuth, now: now) {
            case .send:
                return
            case .refuse(let retryAfter):
                throw .reddit(.rateLimited(retryAfter: retryAfter))
            case .wait(let until):
                let waited = now.timeIntervalSince(started)
                let delay = until.timeIntervalSince(now)
                let limit = Double(settings.maxRateLimitWait.components.seconds)
                guard waited + delay <= limit else { throw .reddit(.rateLimited(retryAfter: delay)) }
                do {
                    try await clock.sleep(.milliseconds(Int64((delay * 1000).rounded(.up)) + 1))
                } catch {
                    throw .reddit(.timeout("cancelled while waiting for the rate-limit window"))
                }
            }
        }
    }
}
