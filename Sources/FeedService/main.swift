import Bus
import FeedCore
import Foundation
import ServiceKit

/// `feed`: the Reddit feed, following `auth.state` (README, "The feed service").
let options: [OptionSpec] = [
    OptionSpec("reddit-url", value: "URL", help: "The Reddit OAuth host (calls with the user's token).", default: "https://oauth.reddit.com"),
    OptionSpec(
        "reddit-public-url", value: "URL", help: "The public Reddit host (anonymous .json reads).", default: "https://www.reddit.com"),
    OptionSpec("user-agent", value: "UA", help: "The User-Agent Reddit requires.", default: RedditUserAgent.default.description),
    OptionSpec("http-timeout", value: "S", help: "Seconds before a request to Reddit gives up.", default: "10"),
    OptionSpec("auth-timeout", value: "S", help: "Seconds before a call to auth (token, refresh) gives up.", default: "15"),
]

func url(_ arguments: ParsedArguments, _ name: String, _ fallback: URL) throws(UsageError) -> URL {
    guard let text = arguments.value(name) else { return fallback }
    guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil, url.query == nil else {
        throw UsageError("--\(name) must be an http(s) URL without a query, got '\(text)'")
    }
    return url
}

func seconds(_ arguments: ParsedArguments, _ name: String, _ fallback: Duration) throws(UsageError) -> Duration {
    guard let value = try arguments.seconds(name) else { return fallback }
    guard value > .zero else { throw UsageError("--\(name) must be a positive number of seconds") }
    return value
}

await FeatureService.run(name: FeedService.name, overview: "The Reddit feed, following auth.state.", options: options) { context in
    let arguments = context.arguments
    let userAgent: RedditUserAgent
    do throws(RedditError) {
        userAgent = try arguments.value("user-agent").map { text throws(RedditError) in try RedditUserAgent(parsing: text) } ?? .default
    } catch {
        throw UsageError("--user-agent: \(error.busFailure.message)")
    }
    let settings = RedditSettings(
        oauthBaseURL: try url(arguments, "reddit-url", RedditRequestBuilder.defaultOAuthBaseURL),
        publicBaseURL: try url(arguments, "reddit-public-url", RedditRequestBuilder.defaultPublicBaseURL), userAgent: userAgent)
    let api = RedditAPI(
        http: .live(timeout: try seconds(arguments, "http-timeout", .seconds(10)), userAgent: userAgent.description),
        tokens: .bus(context.bus, caller: FeedService.name, timeout: try seconds(arguments, "auth-timeout", .seconds(15))),
        settings: settings)
    var service = FeedService.definition(feature: FeedFeature(api: api))
    service.use(.logging(context.logger))
    context.logger.info(
        "reddit", metadata: ["oauth": settings.oauthBaseURL.absoluteString, "public": settings.publicBaseURL.absoluteString])
    return service
}
