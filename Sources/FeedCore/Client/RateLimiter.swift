import Foundation

/// The two Reddit request budgets (OAuth and anonymous) shared by every request of the service.
actor RateLimiter {
    private var oauth = RateLimitBudget(requestsPerWindow: 100)
    private var anonymous = RateLimitBudget(requestsPerWindow: 10)

    func reserve(oauth isOAuth: Bool, now: Date) -> RateLimitDecision {
        isOAuth ? oauth.reserve(now: now) : anonymous.reserve(now: now)
    }

    func record(oauth isOAuth: Bool, headers: [String: String], status: Int, now: Date) {
        if isOAuth {
            oauth.record(headers: headers, status: status, now: now)
        } else {
            anonymous.record(headers: headers, status: status, now: now)
        }
    }

    func recordNoAnswer(oauth isOAuth: Bool, now: Date) {
        if isOAuth { oauth.recordNoAnswer(now: now) } else { anonymous.recordNoAnswer(now: now) }
    }
}
