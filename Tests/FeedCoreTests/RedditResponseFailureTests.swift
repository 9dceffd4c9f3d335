import FeedCore
import Foundation
import Testing

struct RedditResponseFailureTests {
    private let about = RedditEndpoint.subredditAbout(name: "secretclub")
    private let hot = RedditEndpoint.subreddit(name: "secretclub", sort: .hot)

    @Test func failure_when200WithJSONErrors_isAPIErrors() throws {
        let response = try Fixture.ok("api_error_user_required.json")
        let expected = RedditError.apiErrors([RedditAPIError(code: "USER_REQUIRED", message: "Please log in to do that.")])
        #expect(response.failure(for: .vote(fullname: "t3_1abc1", direction: .up)) == expected)
        #expect(throws: expected) { try response.acknowledgement(for: .vote(fullname: "t3_1abc1", direction: .up)) }
        #expect(
            expected.busFailure
                == BusFailure(
                    status: 403, code: "sign_in_required", message: "Reddit needs a signed-in user: USER_REQUIRED: Please log in to do that."))
    }

    @Test func failure_whenRatelimitAPIError_isTransientRateLimited() throws {
        let error = try #require(Fixture.ok("api_error_ratelimit.json").failure(for: .save(fullname: "t3_1abc1")))
        #expect(error.isTransient)
        #expect(error.busFailure.status == 503)
        #expect(error.busFailure.code == "rate_limited")
    }

    @Test func failure_when200Listing_isNil() throws {
        #expect(try Fixture.ok("subreddit_hot.json").failure(for: hot) == nil)
        #expect(try Fixture.ok("morechildren_c3_c4.json").failure(for: nil) == nil)
    }

    @Test func failure_whenHTML429WithRetryAfter_isRateLimited() throws {
        let response = RedditResponse(
            status: 429, headers: ["Content-Type": "text/html; charset=UTF-8", "Retry-After": "4"], body: try Fixture.data("rate_limited_429.html"))
        #expect(response.failure(for: hot) == .rateLimited(retryAfter: 4))
        #expect(throws: RedditError.rateLimited(retryAfter: 4)) { try response.listing(of: Post.self, for: hot) }
        #expect(
            RedditError.rateLimited(retryAfter: 4).busFailure
                == BusFailure(status: 503, code: "rate_limited", message: "Reddit rate limit reached: retry in 4 s"))
    }

    @Test func failure_when429WithoutRetryAfter_usesWindowReset() {
        let response = RedditResponse(status: 429, headers: ["x-ratelimit-reset": "37"], body: Data())
        #expect(response.failure(for: nil) == .rateLimited(retryAfter: 37))
    }

    @Test func failure_when302_isUnknownSubredditOrSignedOut() throws {
        let redirect = RedditResponse(status: 302, headers: ["location": "https://www.reddit.com/subreddits/search?q=secretclub"], body: Data())
        #expect(redirect.failure(for: about) == .unknownSubreddit("secretclub"))
        #expect(redirect.failure(for: hot) == .unknownSubreddit("secretclub"))
        #expect(redirect.failure(for: .mySubscriptions()) == .signInRequired)
        #expect(
            redirect.failure(for: .frontPage(sort: .hot))
                == .invalidResponse(status: 302, excerpt: "redirect to https://www.reddit.com/subreddits/search?q=secretclub"))
        #expect(
            RedditError.unknownSubreddit("secretclub").busFailure
                == BusFailure(status: 404, code: "unknown_subreddit", message: "r/secretclub does not exist"))
    }

    @Test func subredditAbout_whenEmptyListing_isUnknownSubreddit() throws {
        #expect(throws: RedditError.unknownSubreddit("secretclub")) { try Fixture.ok("about_unknown.json").subredditAbout(for: about) }
    }

    @Test func subscriptionsPage_whenLoggedOutString_isSignInRequired() {
        let response = RedditResponse(status: 200, body: Data(#""{}""#.utf8))
        #expect(throws: RedditError.signInRequired) { try response.subscriptionsPage(for: .mySubscriptions()) }
    }

    @Test func failure_when401WithInvalidToken_asksForOneRefresh() throws {
        let response = RedditResponse(
            status: 401, headers: ["WWW-Authenticate": #"Bearer realm="reddit", error="invalid_token""#],
            body: try Fixture.data("error_unauthorized.json"))
        let error = try #require(response.failure(for: .me))
        #expect(error == .unauthorized(invalidToken: true))
        #expect(error.shouldRefreshToken)
        #expect(error.busFailure.status == 403)
        #expect(error.busFailure.code == "reddit_unauthorized")
        #expect(RedditResponse(status: 401, body: Data()).failure(for: .me) == .unauthorized(invalidToken: false))
    }

    @Test func failure_when403WithInsufficientScope_isInsufficientScope() throws {
        let response = RedditResponse(
            status: 403, headers: ["www-authenticate": #"Bearer realm="reddit", error="insufficient_scope", scope="vote""#],
            body: try Fixture.data("error_forbidden_scope.json"))
        let error = try #require(response.failure(for: .vote(fullname: "t3_1abc1", direction: .up)))
        #expect(error == .insufficientScope(scope: "vote"))
        #expect(error.shouldRefreshToken == false)
        #expect(error.busFailure.code == "insufficient_scope")
    }

    @Test func failure_when403Private_isPrivateSubreddit() throws {
        let response = RedditResponse(status: 403, body: try Fixture.data("error_private.json"))
        #expect(response.failure(for: hot) == .privateSubreddit("secretclub"))
        #expect(
            RedditError.privateSubreddit("secretclub").busFailure
                == BusFailure(status: 403, code: "private_subreddit", message: "r/secretclub is private"))
        #expect(RedditResponse(status: 403, body: try Fixture.data("error_quarantined.json")).failure(for: hot) == .forbidden(reason: "quarantined"))
        #expect(RedditResponse(status: 403, body: Data("<html>blocked</html>".utf8)).failure(for: hot) == .forbidden(reason: nil))
    }

    @Test func failure_when404_isNotFoundOrBanned() throws {
        #expect(RedditResponse(status: 404, body: try Fixture.data("error_banned.json")).failure(for: hot) == .bannedSubreddit("secretclub"))
        let comments = RedditEndpoint.comments(subreddit: "swift", postID: "zzz9")
        let notFound = RedditResponse(status: 404, body: try Fixture.data("error_not_found.json")).failure(for: comments)
        #expect(notFound == .notFound(resource: "post zzz9 in r/swift", reason: nil))
        #expect(notFound?.busFailure == BusFailure(status: 404, code: "not_found", message: "Reddit has no post zzz9 in r/swift"))
        let page = RedditResponse(status: 404, body: try Fixture.data("error_page_not_created.json")).failure(for: .userAbout(username: "nobody"))
        #expect(page == .notFound(resource: "user u/nobody", reason: "PAGE_NOT_CREATED"))
    }

    @Test func failure_when400Validation_keepsFieldsAndExplanation() throws {
        let error = try #require(RedditResponse(status: 400, body: try Fixture.data("error_validation.json")).failure(for: nil))
        let expected = RedditValidationFailure(
            fields: ["display_name"], explanation: "this is too long (max: 21)", message: "Bad Request", reason: "TOO_LONG")
        #expect(error == .badRequest(expected))
        #expect(
            error.busFailure
                == BusFailure(
                    status: 400, code: "bad_request", message: "Reddit refused the request: TOO_LONG on display_name: this is too long (max: 21)"))
    }

    @Test func failure_when5xx_isServer() {
        for status in [500, 502, 503, 504] {
            let error = RedditResponse(status: status, body: Data("<html>down</html>".utf8)).failure(for: nil)
            #expect(error == .server(status: status))
            #expect(error?.isTransient == true)
            #expect(error?.busFailure.code == "upstream_error")
        }
    }

    @Test func decode_whenHTMLWhereJSONExpected_isInvalidResponseWithExcerpt() throws {
        let response = RedditResponse(status: 200, headers: ["content-type": "text/html"], body: try Fixture.data("rate_limited_429.html"))
        #expect(
            throws: RedditError.invalidResponse(
                status: 200, excerpt: "not JSON: <!doctype html> <html> <head> <title>Too Many Requests</title> </head> <body> <h…")
        ) {
            try response.listing(of: Post.self, for: hot)
        }
        let failure = RedditError.invalidResponse(status: 200, excerpt: "not JSON: <html>").busFailure
        #expect(
            failure == BusFailure(status: 502, code: "invalid_response", message: "Reddit answered 200 with an unexpected body: not JSON: <html>"))
    }

    @Test func transportErrors_mapToUnreachableAndTimeout() {
        #expect(
            RedditError.upstreamUnreachable("connection refused").busFailure
                == BusFailure(status: 503, code: "upstream_unreachable", message: "Reddit is unreachable: connection refused"))
        #expect(RedditError.timeout("no answer in 10 s").busFailure.status == 504)
        #expect(
            RedditError.invalidInput(field: "subreddit", value: "a b", rule: "letters").busFailure
                == BusFailure(status: 400, code: "bad_request", message: "invalid subreddit 'a b': expected letters"))
    }
}
