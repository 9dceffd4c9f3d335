import Foundation

/// Where the Reddit client sends its requests and how it names itself.
public struct RedditSettings: Sendable, Equatable {
    /// `--reddit-url`: the OAuth host (token-bearing calls).
    public var oauthBaseURL: URL
    /// `--reddit-public-url`: the public host (anonymous `.json` reads).
    public var publicBaseURL: URL
    /// `--user-agent`.
    public var userAgent: RedditUserAgent
    /// The longest a request waits for the rate-limit window to free up before it is refused.
    public var maxRateLimitWait: Duration

    public init(
        oauthBaseURL: URL = RedditRequestBuilder.defaultOAuthBaseURL, publicBaseURL: URL = RedditRequestBuilder.defaultPublicBaseURL,
        userAgent: RedditUserAgent = .default, maxRateLimitWait: Duration = .seconds(5)
    ) {
        self.oauthBaseURL = oauthBaseURL
        self.publicBaseURL = publicBaseURL
        self.userAgent = userAgent
        self.maxRateLimitWait = maxRateLimitWait
    }

    func builder(_ access: RedditAccess) -> RedditRequestBuilder {
        RedditRequestBuilder(access: access, userAgent: userAgent, oauthBaseURL: oauthBaseURL, publicBaseURL: publicBaseURL)
    }
}
