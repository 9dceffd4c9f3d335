import Bus
import Foundation
import ServiceKit

/// OAuth 2.0 authorization-code flow (RFC 6749) with PKCE S256 (RFC 7636) and the `state`
/// check, HTTP Basic client authentication and form bodies at the token endpoint, refresh
/// (section 6) and revocation (RFC 7009).
public struct OAuthProvider: IdentityProvider {
    public let kind = ProviderKind.oauth
    public let config: OAuthConfig
    let http: HTTPClient
    let clock: ServiceClock
    let logger: Logger

    public init(config: OAuthConfig, http: HTTPClient, clock: ServiceClock, logger: Logger) {
        self.config = config
        self.http = http
        self.clock = clock
        self.logger = logger
    }

    public func beginSignIn(state: String, verifier: Secret) throws(ProviderFailure) -> OAuthAttempt {
        guard var components = URLComponents(url: config.authorizeURL, resolvingAgainstBaseURL: false) else {
            throw .unsupported("authorize_url is not a URL")
        }
        var fields: [(String, String)] = [
            ("response_type", "code"),
            ("client_id", config.clientID),
            ("redirect_uri", config.redirectURI),
            ("scope", config.scopes.joined(separator: " ")),
            ("state", state),
            ("code_challenge", Digest.pkceChallenge(verifier)),
            ("code_challenge_method", "S256"),
        ]
        fields += config.authorizeParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let query = fields.map { "\(FormEncoding.encode($0.0, spaceAsPlus: false))=\(FormEncoding.encode($0.1, spaceAsPlus: false))" }
        components.percentEncodedQuery = ([components.percentEncodedQuery].compactMap { $0 } + query).joined(separator: "&")
        guard let url = components.string else { throw .unsupported("cannot build the authorize URL") }
        return OAuthAttempt(state: state, verifier: verifier, redirectURI: config.redirectURI, authorizeURL: url)
    }

    public func exchange(code: String, attempt: OAuthAttempt) async throws(ProviderFailure) -> TokenGrant {
        var grant = try await tokenRequest([
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", attempt.redirectURI),
            ("code_verifier", attempt.verifier.revealed),
        ])
        if grant.scopes.isEmpty { grant.scopes = config.scopes }
        grant.user = await userName(grant.accessToken)
        return grant
    }

    public func refresh(_ refreshToken: Secret, user: String?) async throws(ProviderFailure) -> TokenGrant {
        var grant = try await tokenRequest([("grant_type", "refresh_token"), ("refresh_token", refreshToken.revealed)])
        grant.user = user
        if user == nil { grant.user = await userName(grant.accessToken) }
        return grant
    }

    public func revoke(_ tokens: [RevocableToken]) async -> RevocationReport {
        var report = RevocationReport()
        guard let revokeURL = config.revokeURL else {
            for token in tokens { report.notRevoked[token.kind.rawValue] = "the provider has no revocation endpoint (revoke_url)" }
            return report
        }
        for token in tokens {
            let request = HTTPRequest(
                method: "POST", url: revokeURL, headers: clientHeaders(),
                body: FormEncoding.body([("token", token.token.revealed), ("token_type_hint", token.kind.rawValue)]))
            do {
                let response = try await http.send(request)
                if (200..<300).contains(response.status) {
                    report.revoked.append(token.kind.rawValue)
                } else {
                    let error = (try? JSONDecoder().decode(TokenResponse.self, from: response.body))?.error
                    report.notRevoked[token.kind.rawValue] = "HTTP \(response.status)\(error.map { " \($0)" } ?? "")"
                }
            } catch {
                report.notRevoked[token.kind.rawValue] = error.message
            }
        }
        return report
    }

    // MARK: HTTP

    private func clientHeaders() -> [String: String] {
        [
            "Authorization": FormEncoding.basicAuthorization(clientID: config.clientID, secret: config.clientSecret),
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
            "User-Agent": config.userAgent,
        ]
    }

    private func tokenRequest(_ fields: [(String, String)]) async throws(ProviderFailure) -> TokenGrant {
        let request = HTTPRequest(method: "POST", url: config.tokenURL, headers: clientHeaders(), body: FormEncoding.body(fields))
        let sentAt = clock.now()
        let response: HTTPResponse
        do {
            response = try await http.send(request)
        } catch {
            throw .unavailable(error.message)
        }
        return try TokenResponse.grant(from: response, sentAt: sentAt)
    }

    /// The user's name from the userinfo endpoint; nil (and a warning) when it has none or
    /// fails: the sign-in still counts, `auth.state` then shows no user name.
    private func userName(_ accessToken: Secret) async -> String? {
        guard let url = config.userinfoURL else { return nil }
        let request = HTTPRequest(
            method: "GET", url: url,
            headers: ["Authorization": "Bearer \(accessToken.revealed)", "Accept": "application/json", "User-Agent": config.userAgent])
        do {
            let response = try await http.send(request)
            guard response.status == 200 else {
                logger.warning("userinfo answered HTTP \(response.status); signed in without a user name")
                return nil
            }
            guard let object = try? JSONDecoder().decode([String: UserInfoValue].self, from: response.body) else {
                logger.warning("userinfo answered something that is not a JSON object; signed in without a user name")
                return nil
            }
            let fields = config.userField.map { [$0] } ?? ["preferred_username", "name", "username", "sub"]
            for field in fields { if case .string(let name)? = object[field], !name.isEmpty { return name } }
            logger.warning("userinfo has none of the fields \(fields.joined(separator: ", ")); signed in without a user name")
            return nil
        } catch {
            logger.warning("userinfo failed: \(error.message); signed in without a user name")
            return nil
        }
    }
}

/// One value of a userinfo object: only strings matter.
private enum UserInfoValue: Decodable {
    case string(String)
    case other

    init(from decoder: Decoder) throws {
        self = (try? decoder.singleValueContainer().decode(String.self)).map(UserInfoValue.string) ?? .other
    }
}
