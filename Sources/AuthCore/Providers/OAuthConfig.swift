import Foundation

/// An OAuth 2.0 provider's settings: endpoints, client credentials, scopes, redirect URI.
/// Read from `--oauth-config FILE` (JSON, snake_case keys as below) and the `--oauth-*` flags,
/// flags winning; `"preset": "reddit"` fills in Reddit's endpoints and the seed's scopes.
///
/// ```json
/// {"preset": "reddit", "client_id": "abc", "client_secret": "", "redirect_uri": "http://127.0.0.1:65010/callback"}
/// {"authorize_url": "...", "token_url": "...", "revoke_url": "...", "userinfo_url": "...",
///  "user_field": "preferred_username", "client_id": "...", "client_secret": "...",
///  "scopes": ["identity", "read"], "redirect_uri": "...", "authorize_params": {"duration": "permanent"}}
/// ```
public struct OAuthConfig: Sendable, Equatable {
    public var authorizeURL: URL
    public var tokenURL: URL
    /// RFC 7009 revocation endpoint; without it logout only forgets the tokens.
    public var revokeURL: URL?
    /// Where the user's name comes from: a GET with the access token answering JSON.
    public var userinfoURL: URL?
    /// The JSON field of the userinfo answer holding the name (default: the first of
    /// `preferred_username`, `name`, `username`, `sub`).
    public var userField: String?
    public var clientID: String
    /// Empty or nil for an installed app with no secret (Basic auth with an empty password).
    public var clientSecret: Secret?
    public var scopes: [String]
    public var redirectURI: String
    /// Extra authorization request parameters (Reddit: `duration=permanent`).
    public var authorizeParameters: [String: String]
    public var userAgent: String

    public init(
        authorizeURL: URL, tokenURL: URL, revokeURL: URL? = nil, userinfoURL: URL? = nil, userField: String? = nil,
        clientID: String, clientSecret: Secret? = nil, scopes: [String], redirectURI: String,
        authorizeParameters: [String: String] = [:], userAgent: String = OAuthConfig.defaultUserAgent
    ) {
        self.authorizeURL = authorizeURL
        self.tokenURL = tokenURL
        self.revokeURL = revokeURL
        self.userinfoURL = userinfoURL
        self.userField = userField
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scopes = scopes
        self.redirectURI = redirectURI
        self.authorizeParameters = authorizeParameters
        self.userAgent = userAgent
    }

    public static let defaultUserAgent = "swiftbus-auth/0.1"

    /// The seed's Reddit scopes.
    public static let redditScopes = "identity edit flair history mysubreddits privatemessages read report save submit subscribe vote wikiread"
        .split(separator: " ").map(String.init)

    /// The settings a preset fills in (`reddit`), as configuration fields.
    public static func preset(_ name: String) -> [String: ConfigValue]? {
        switch name {
        case "reddit":
            return [
                "authorize_url": .string("https://www.reddit.com/api/v1/authorize"),
                "token_url": .string("https://www.reddit.com/api/v1/access_token"),
                "revoke_url": .string("https://www.reddit.com/api/v1/revoke_token"),
                "userinfo_url": .string("https://oauth.reddit.com/api/v1/me"),
                "user_field": .string("name"),
                "scopes": .list(redditScopes),
                "authorize_params": .map(["duration": "permanent"]),
            ]
        default:
            return nil
        }
    }

    /// A configuration value from the file or a flag.
    public enum ConfigValue: Sendable, Equatable, Decodable {
        case string(String)
        case list([String])
        case map([String: String])

        public init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .string(text)
            } else if let list = try? container.decode([String].self) {
                self = .list(list)
            } else {
                self = .map(try container.decode([String: String].self))
            }
        }
    }

    public static let knownKeys: Set<String> = [
        "preset", "authorize_url", "token_url", "revoke_url", "userinfo_url", "user_field", "client_id", "client_secret",
        "scopes", "redirect_uri", "authorize_params", "user_agent",
    ]

    /// Builds the configuration from the file's fields overlaid with the flags' (each a
    /// `[key: value]` of ``knownKeys``).
    /// - Throws: ``OAuthConfigError`` naming the missing or bad field.
    public static func make(file: [String: ConfigValue] = [:], flags: [String: ConfigValue] = [:]) throws(OAuthConfigError) -> OAuthConfig {
        var fields: [String: ConfigValue] = [:]
        let presetName: String?
        switch flags["preset"] ?? file["preset"] {
        case .string(let name)?: presetName = name
        case nil: presetName = nil
        default: throw .invalid("preset", "must be a name")
        }
        if let presetName {
            guard let preset = preset(presetName) else { throw .invalid("preset", "unknown preset '\(presetName)' (known: reddit)") }
            fields.merge(preset) { $1 }
        }
        fields.merge(file) { $1 }
        fields.merge(flags) { $1 }
        for key in fields.keys where !knownKeys.contains(key) {
            throw .invalid(key, "unknown setting (known: \(knownKeys.sorted().joined(separator: ", ")))")
        }

        func string(_ key: String) throws(OAuthConfigError) -> String? {
            switch fields[key] {
            case .string(let value)?: return value
            case nil: return nil
            default: throw .invalid(key, "must be a string")
            }
        }
        func url(_ key: String, required: Bool) throws(OAuthConfigError) -> URL? {
            guard let text = try string(key), !text.isEmpty else {
                if required { throw .missing(key) }
                return nil
            }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), url.host != nil else {
                throw .invalid(key, "'\(text)' is not an absolute URL")
            }
            guard scheme == "https" || (scheme == "http" && isLoopback(url.host!)) else {
                throw .invalid(key, "must be https (http only on loopback)")
            }
            return url
        }
        let authorizeURL = try url("authorize_url", required: true)!
        let tokenURL = try url("token_url", required: true)!
        guard let clientID = try string("client_id"), !clientID.isEmpty else { throw .missing("client_id") }
        let scopes: [String]
        switch fields["scopes"] {
        case .list(let list)?: scopes = list
        case .string(let text)?: scopes = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        case nil: throw .missing("scopes")
        default: throw .invalid("scopes", "must be a list or a space-separated string")
        }
        let parameters: [String: String]
        switch fields["authorize_params"] {
        case .map(let map)?: parameters = map
        case nil: parameters = [:]
        default: throw .invalid("authorize_params", "must be an object of strings")
        }
        guard let redirectURI = try string("redirect_uri"), !redirectURI.isEmpty else { throw .missing("redirect_uri") }
        guard let redirect = URLComponents(string: redirectURI), redirect.scheme != nil else {
            throw .invalid("redirect_uri", "'\(redirectURI)' is not an absolute URI")
        }
        guard redirect.fragment == nil else { throw .invalid("redirect_uri", "must not have a fragment (RFC 6749 section 3.1.2)") }
        let secret = try string("client_secret").map(Secret.init)
        return OAuthConfig(
            authorizeURL: authorizeURL, tokenURL: tokenURL,
            revokeURL: try url("revoke_url", required: false), userinfoURL: try url("userinfo_url", required: false),
            userField: try string("user_field"), clientID: clientID, clientSecret: secret, scopes: scopes, redirectURI: redirectURI,
            authorizeParameters: parameters, userAgent: try string("user_agent") ?? defaultUserAgent)
    }

    /// Reads `--oauth-config FILE`. A file holding a client secret must be private (0600).
    public static func fields(fromFile url: URL) throws(OAuthConfigError) -> [String: ConfigValue] {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .file(url.path, "cannot read it: \((error as NSError).localizedDescription)")
        }
        let fields: [String: ConfigValue]
        do {
            fields = try JSONDecoder().decode([String: ConfigValue].self, from: data)
        } catch {
            throw .file(url.path, "not a JSON object of strings, lists of strings and string maps")
        }
        if case .string(let secret)? = fields["client_secret"], !secret.isEmpty {
            do {
                try SecureFile.checkPrivate(url)
            } catch {
                throw .file(url.path, "it holds client_secret, so it must not be readable by others: \(error)")
            }
        }
        return fields
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}

/// A provider configuration that cannot be used.
public enum OAuthConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing(String)
    case invalid(String, String)
    case file(String, String)

    public var description: String {
        switch self {
        case .missing(let key):
            return "OAuth setting '\(key)' is missing (in --oauth-config or --oauth-\(key.replacingOccurrences(of: "_", with: "-")))"
        case .invalid(let key, let why): return "OAuth setting '\(key)': \(why)"
        case .file(let path, let why): return "OAuth config \(path): \(why)"
        }
    }
}
