import AuthCore
import Bus
import Foundation

/// The auth service's own command-line options and what they parse into.
struct AuthOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(
            "provider", value: "local|oauth", help: "Identity provider: local users (offline) or an OAuth 2.0 server.",
            environment: "AUTH_PROVIDER", default: "local"),
        OptionSpec("refresh-interval", value: "S", help: "Seconds between token refreshes while signed in.", default: "1800"),
        OptionSpec("retry-interval", value: "S", help: "Seconds before retrying a refresh that failed because the provider was down.", default: "60"),
        OptionSpec(
            "token-callers", value: "A,B",
            help: "Services (request meta caller) that may read the access token with `token`; empty: nobody.",
            environment: "AUTH_TOKEN_CALLERS"),
        OptionSpec("http-timeout", value: "S", help: "Seconds before an HTTP request to the provider gives up.", default: "10"),
        OptionSpec("access-ttl", value: "S", help: "local: access token lifetime in seconds.", default: "3600"),
        OptionSpec("refresh-ttl", value: "S", help: "local: refresh token lifetime in seconds.", default: "2592000"),
        OptionSpec("local-scopes", value: "SCOPES", help: "local: the scopes a signed-in user has (space-separated).", default: "identity"),
        OptionSpec(
            "oauth-config", value: "FILE", help: "oauth: JSON settings (keys as the --oauth-* options, snake_case).",
            environment: "AUTH_OAUTH_CONFIG"),
        OptionSpec("oauth-preset", value: "NAME", help: "oauth: fill in a provider's endpoints and scopes (reddit)."),
        OptionSpec("oauth-authorize-url", value: "URL", help: "oauth: the authorization endpoint."),
        OptionSpec("oauth-token-url", value: "URL", help: "oauth: the token endpoint."),
        OptionSpec("oauth-revoke-url", value: "URL", help: "oauth: the RFC 7009 revocation endpoint."),
        OptionSpec("oauth-userinfo-url", value: "URL", help: "oauth: a GET endpoint naming the signed-in user."),
        OptionSpec("oauth-user-field", value: "FIELD", help: "oauth: the userinfo field with the user's name."),
        OptionSpec("oauth-client-id", value: "ID", help: "oauth: the client id."),
        OptionSpec(
            "oauth-client-secret", value: "SECRET",
            help: "oauth: the client secret; prefer the environment or the config file (arguments show in ps).",
            environment: "AUTH_OAUTH_CLIENT_SECRET"),
        OptionSpec("oauth-scopes", value: "SCOPES", help: "oauth: the scopes to request (space-separated)."),
        OptionSpec("oauth-redirect-uri", value: "URI", help: "oauth: the redirect URI registered for the client."),
    ]

    var provider: ProviderKind
    var config: AuthConfig
    var httpTimeout: Duration
    var accessTTL: Duration
    var refreshTTL: Duration
    var localScopes: [String]
    var oauth: OAuthConfig?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let name = arguments.value("provider") ?? "local"
        guard let provider = ProviderKind(rawValue: name) else {
            throw UsageError("--provider must be local or oauth, got '\(name)'")
        }
        self.provider = provider
        func positive(_ option: String) throws(UsageError) -> Duration {
            guard let value = try arguments.seconds(option), value > .zero else {
                throw UsageError("--\(option) must be a positive number of seconds")
            }
            return value
        }
        let callers = (arguments.value("token-callers") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        config = AuthConfig(
            provider: provider, tokenCallers: Set(callers.filter { !$0.isEmpty }), refreshInterval: try positive("refresh-interval"),
            retryInterval: try positive("retry-interval"))
        httpTimeout = try positive("http-timeout")
        accessTTL = try positive("access-ttl")
        refreshTTL = try positive("refresh-ttl")
        localScopes = (arguments.value("local-scopes") ?? "identity").split(separator: " ").map(String.init)
        guard provider == .oauth else { return }

        var flags: [String: OAuthConfig.ConfigValue] = [:]
        for key in [
            "preset", "authorize_url", "token_url", "revoke_url", "userinfo_url", "user_field", "client_id", "client_secret", "scopes",
            "redirect_uri",
        ] {
            if let value = arguments.value("oauth-" + key.replacingOccurrences(of: "_", with: "-")) { flags[key] = .string(value) }
        }
        do throws(OAuthConfigError) {
            let file =
                try arguments.value("oauth-config").map { path throws(OAuthConfigError) in
                    try OAuthConfig.fields(fromFile: URL(fileURLWithPath: path))
                } ?? [:]
            oauth = try OAuthConfig.make(file: file, flags: flags)
        } catch {
            throw UsageError(error.description)
        }
    }
}
