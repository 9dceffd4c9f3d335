import FeedCore
import Foundation
import Testing

struct RateLimitBudgetTests {
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    private func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    private func headers(remaining: String, used: String, reset: String) -> [String: String] {
        ["x-ratelimit-remaining": remaining, "x-ratelimit-used": used, "x-ratelimit-reset": reset]
    }

    @Test func reserve_whenFresh_sendsAndCountsInFlight() {
        var budget = RateLimitBudget()
        #expect(budget.canSend(now: start) == .send)
        let decision = budget.reserve(now: start)
        #expect(decision == .send)
        #expect(budget.inFlight == 1)
    }

    @Test func record_whenHeaders_takesRemainingUsedAndReset() {
        var budget = RateLimitBudget()
        _ = budget.reserve(now: start)
        budget.record(headers: headers(remaining: "599.0", used: "1", reset: "103"), status: 200, now: at(1))
        #expect(budget.remaining == 599)
        #expect(budget.used == 1)
        #expect(budget.resetAt == at(104))
        #expect(budget.inFlight == 0)
    }

    @Test func canSend_whenLastRequestSpent_waitsOrRefusesUntilReset() {
        var budget = RateLimitBudget(maxWait: 5)
        _ = budget.reserve(now: start)
        budget.record(headers: headers(remaining: "1.0", used: "99", reset: "30"), status: 200, now: start)
        let last = budget.reserve(now: start)
        #expect(last == .send)
        // One request is left and it is in flight: none more until the window ends.
        #expect(budget.canSend(now: at(1)) == .refuse(retryAfter: 29))
        #expect(budget.canSend(now: at(26)) == .wait(until: at(30)))
        budget.record(headers: headers(remaining: "0.0", used: "100", reset: "28"), status: 200, now: at(2))
        #expect(budget.canSend(now: at(25)) == .wait(until: at(30)))
        #expect(budget.canSend(now: at(30)) == .send)
    }

    @Test func canSend_whenRequestsInFlight_neverExceedsRemaining() {
        var budget = RateLimitBudget()
        _ = budget.reserve(now: start)
        budget.record(headers: headers(remaining: "3.0", used: "97", reset: "60"), status: 200, now: start)
        let decisions = (0..<5).map { _ in budget.reserve(now: at(1)) }
        #expect(decisions.filter { $0 == .send }.count == 3)
        #expect(budget.inFlight == 3)
        budget.release()
        let afterRelease = budget.reserve(now: at(1))
        #expect(afterRelease == .send)
    }

    @Test func record_whenNoHeaders_countsOneRequestAgainstLocalWindow() {
        var budget = RateLimitBudget(requestsPerWindow: 2, window: 60, maxWait: 0)
        let first = budget.reserve(now: start)
        #expect(first == .send)
        budget.record(headers: [:], status: 200, now: at(1))
        #expect(budget.remaining == 1)
        #expect(budget.used == 1)
        let second = budget.reserve(now: at(2))
        #expect(second == .send)
        budget.recordNoAnswer(now: at(3))
        #expect(budget.remaining == 0)
        #expect(budget.used == 2)
        #expect(budget.canSend(now: at(4)) == .refuse(retryAfter: 56))
        #expect(budget.canSend(now: at(60)) == .send)
    }

    @Test func record_when429WithRetryAfter_holdsEverythingUntilThen() {
        var budget = RateLimitBudget(maxWait: 5)
        _ = budget.reserve(now: start)
        budget.record(headers: ["retry-after": "4", "x-ratelimit-remaining": "10", "x-ratelimit-reset": "50"], status: 429, now: start)
        #expect(budget.remaining == 0)
        #expect(budget.canSend(now: at(1)) == .wait(until: at(4)))
        let held = budget.reserve(now: at(1))
        #expect(held == .wait(until: at(4)))
        #expect(budget.inFlight == 0)
        // The 429 also spent the window: after retry-after, the reset still holds requests back.
        #expect(budget.canSend(now: at(10)) == .refuse(retryAfter: 40))
    }

    @Test func record_when429WithoutHeaders_holdsUntilLocalWindowEnds() {
        var budget = RateLimitBudget(requestsPerWindow: 10, window: 60)
        _ = budget.reserve(now: start)
        budget.record(headers: [:], status: 429, now: at(2))
        #expect(budget.remaining == 0)
        #expect(budget.canSend(now: at(2)) == .refuse(retryAfter: 58))
        #expect(budget.canSend(now: at(56)) == .wait(until: at(60)))
        #expect(budget.canSend(now: at(60)) == .send)
    }
}
