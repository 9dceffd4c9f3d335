import AuthCore
import Bus
import Foundation
import ServiceKit
import Testing

/// The OAuth provider against scripted HTTP answers: what it sends, and how it reads good,
/// bad and garbage answers.
struct OAuthProviderTests {
    static let config = try! OAuthConfig.make(flags: [
        "authorize_url": .string("https://provider.test/authorize"), "token_url": .string("https://provider.test/token"),
        "revoke_url": .string("https://provider.test/revoke"), "client_id": .string("my client"), "client_secret": .string("s:cret"),
        "scopes": .string("identity read"), "redirect_uri": .string("http://127.0.0.1:8765/callback"),
    ])

    /// A provider whose HTTP answers come from `answer`; the requests it made are recorded.
    func provider(
        _ config: OAuthConfig = Self.config, answer: @escaping @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse
    )
        -> (OAuthProvider, Locked<[HTTPRequest]>)
    {
        let sent = Locked<[HTTPRequest]>([])
        let http = HTTPClient { (request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse in
            sent.withLock { $0.append(request) }
            return try answer(request)
        }
        let clock = ManualClock(now: Fixtures.now)
        return (OAuthProvider(config: config, http: http, clock: .manual(clock), logger: Logger(label: "test", level: .critical)), sent)
    }

    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
    }

    static func form(_ body: Data?) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body ?? Data(), as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    @Test func pkce_challenge_matchesRFC7636AppendixB() {
        #expect(Digest.pkceChallenge(Secret("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func beginSignIn_authorizeURL_carriesEveryParameter() throws {
        let (oauth, _) = provider { _ throws(HTTPTransportError) in Self.json(500, "{}") }
        let attempt = try oauth.beginSignIn(state: "the-state", verifier: Secret("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"))
        let components = try #require(URLComponents(string: attempt.authorizeURL))
        let items = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(components.host == "provider.test")
        #expect(
            items == [
                "response_type": "code", "client_id": "my client", "redirect_uri": "http://127.0.0.1:8765/callback",
                "scope": "identity read", "state": "the-state", "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                "code_challenge_method": "S256",
            ])
        #expect(!attempt.authorizeURL.contains("dBjftJeZ"), "the verifier never leaves before the exchange")
    }

    @Test func redditPreset_hasTheSeedsScopes_andAsksForAPermanentGrant() throws {
        let config = try OAuthConfig.make(flags: [
            "preset": .string("reddit"), "client_id": .string("abc"), "redirect_uri": .string("http://127.0.0.1:65010/callback"),
        ])
        #expect(
            config.scopes.joined(separator: " ")
                == "identity edit flair history mysubreddits privatemessages read report save submit subscribe vote wikiread")
        #expect(config.revokeURL?.absoluteString == "https://www.reddit.com/api/v1/revoke_token")
        let (oauth, _) = provider(config) { _ throws(HTTPTransportError) in Self.json(500, "{}") }
        let url = try oauth.beginSignIn(state: "s", verifier: Secret("v")).authorizeURL
        #expect(url.hasPrefix("https://www.reddit.com/api/v1/authorize?"))
        #expect(url.contains("duration=permanent"))
        #expect(url.contains("scope=identity%20edit%20flair"))
    }

    @Test func exchange_usesBasicClientAuth_andAFormBody() async throws {
        let (oauth, sent) = provider { request throws(HTTPTransportError) in
            Self.json(200, #"{"access_token":"AT","token_type":"Bearer","expires_in":3600,"refresh_token":"RT","scope":"identity"}"#)
        }
        let attempt = OAuthAttempt(state: "s", verifier: Secret("VERIFIER"), redirectURI: "http://127.0.0.1:8765/callback", authorizeURL: "")
        let grant = try await oauth.exchange(code: "THE CODE", attempt: attempt)
        #expect(
            grant
                == TokenGrant(
                    accessToken: Secret("AT"), refreshToken: Secret("RT"), expiresAt: Fixtures.now.addingTimeInterval(3600),
                    scopes: ["identity"], user: nil))
        let request = try #require(sent.value.first)
        #expect(request.method == "POST")
        #expect(request.url.absoluteString == "https://provider.test/token")
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        // RFC 6749 2.3.1: id and secret are form-encoded, then Basic.
        #expect(request.headers["Authorization"] == "Basic " + Data("my+client:s%3Acret".utf8).base64EncodedString())
        #expect(
            Self.form(request.body) == [
                "grant_type": "authorization_code", "code": "THE CODE", "redirect_uri": "http://127.0.0.1:8765/callback", "code_verifier": "VERIFIER",
            ])
    }

    @Test(arguments: [
        (json(200, "<html>maintenance</html>"), "provider_error"),
        (json(200, #"{"token_type":"bearer"}"#), "provider_error"),
        (json(200, #"{"access_token":"AT","token_type":"mac"}"#), "provider_error"),
        (json(200, #"["access_token"]"#), "provider_error"),
        (json(500, "Internal Server Error"), "provider_error"),
        (json(401, #"{"error":"invalid_client"}"#), "provider_error"),
        (json(400, #"{"error":"invalid_grant","error_description":"code expired"}"#), "invalid_grant"),
        (json(200, #"{"error":"invalid_grant"}"#), "invalid_grant"),
        (json(503, "busy"), "provider_unavailable"),
        (json(502, "<html>bad gateway</html>"), "provider_unavailable"),
        (json(429, "slow down"), "provider_unavailable"),
        (json(400, #"{"error":"temporarily_unavailable"}"#), "provider_unavailable"),
    ])
    func exchange_badAnswers_areClassified(response: HTTPResponse, code: String) async {
        let (oauth, _) = provider { _ throws(HTTPTransportError) in response }
        let attempt = OAuthAttempt(state: "s", verifier: Secret("v"), redirectURI: "http://127.0.0.1:8765/callback", authorizeURL: "")
        do {
            _ = try await oauth.exchange(code: "c", attempt: attempt)
            Issue.record("expected a failure")
        } catch {
            #expect(error.code == code)
        }
    }

    @Test func refresh_transportFailure_isUnavailable_andInvalidGrantIsRefreshExpired() async {
        let (down, _) = provider { request throws(HTTPTransportError) in
            throw HTTPTransportError("POST https://provider.test/token: connection refused")
        }
        await #expect(throws: ProviderFailure.unavailable("POST https://provider.test/token: connection refused")) {
            try await down.refresh(Secret("RT"), user: "alice")
        }
        let (refused, sent) = provider { _ throws(HTTPTransportError) in Self.json(400, #"{"error":"invalid_grant"}"#) }
        do {
            _ = try await refused.refresh(Secret("RT"), user: "alice")
            Issue.record("expected invalid_grant")
        } catch {
            #expect(AuthErrors.from(error, refreshing: true) == AuthErrors.refreshExpired)
        }
        #expect(Self.form(sent.value.first?.body) == ["grant_type": "refresh_token", "refresh_token": "RT"])
    }

    @Test func revoke_sendsRFC7009Requests_andReportsWhatFailed() async {
        let (oauth, sent) = provider { request throws(HTTPTransportError) in
            Self.form(request.body)["token_type_hint"] == "refresh_token"
                ? Self.json(200, "") : Self.json(400, #"{"error":"unsupported_token_type"}"#)
        }
        let report = await oauth.revoke(Fixtures.session().revocable)
        #expect(report == RevocationReport(revoked: ["refresh_token"], notRevoked: ["access_token": "HTTP 400 unsupported_token_type"]))
        #expect(
            sent.value.map { Self.form($0.body) } == [
                ["token": "REFRESH-1", "token_type_hint": "refresh_token"], ["token": "ACCESS-1", "token_type_hint": "access_token"],
            ])
        var config = Self.config
        config.revokeURL = nil
        let (none, nothingSent) = provider(config) { _ throws(HTTPTransportError) in Self.json(200, "") }
        let unrevoked = await none.revoke(Fixtures.session().revocable)
        #expect(unrevoked.revoked.isEmpty)
        #expect(unrevoked.notRevoked.keys.sorted() == ["access_token", "refresh_token"])
        #expect(nothingSent.value.isEmpty)
    }

    @Test func config_errors_nameTheSetting() throws {
        #expect(throws: OAuthConfigError.missing("client_id")) {
            try OAuthConfig.make(flags: ["preset": .string("reddit"), "redirect_uri": .string("http://127.0.0.1/cb")])
        }
        #expect(throws: OAuthConfigError.invalid("token_url", "must be https (http only on loopback)")) {
            try OAuthConfig.make(flags: [
                "authorize_url": .string("https://a.test/x"), "token_url": .string("http://a.test/token"), "client_id": .string("c"),
                "scopes": .string("a"), "redirect_uri": .string("http://127.0.0.1/cb"),
            ])
        }
        #expect(throws: OAuthConfigError.self) { try OAuthConfig.make(flags: ["preset": .string("myspace")]) }
        #expect(throws: OAuthConfigError.self) {
            try OAuthConfig.make(file: ["client_secrte": .string("typo")], flags: ["preset": .string("reddit")])
        }
    }

    @Test func configFile_withASecret_mustBePrivate() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.file("oauth.json")
        try Data(#"{"preset": "reddit", "client_id": "abc", "client_secret": "xyz", "redirect_uri": "http://127.0.0.1:1/cb"}"#.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect(throws: OAuthConfigError.self) { try OAuthConfig.fields(fromFile: file) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let config = try OAuthConfig.make(file: try OAuthConfig.fields(fromFile: file))
        #expect(config.clientSecret == Secret("xyz"))
    }
}
