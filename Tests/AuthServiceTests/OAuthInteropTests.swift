import AuthCore
import Bus
import BusTestSupport
import Foundation
import ServiceKit
import Testing

/// The OAuth provider and the auth feature (in the kit's store) against a real authorization server (authlib) on
/// loopback, over real HTTP (URLSession).
@Suite(.serialized)
struct OAuthInteropTests {
    /// The auth feature for `server`, with tokens in memory and the real clock and HTTP.
    final class Client: Sendable {
        let tokens = TokenBox()
        let published = Locked<[AuthSnapshot]>([])
        let runtime: AuthStoreClient
        let provider: OAuthProvider

        init(_ server: OAuthTestServer, tokenURL: String? = nil) throws {
            var dependencies = AuthDependencies.live(stateDirectory: FileManager.default.temporaryDirectory, httpTimeout: .seconds(5))
            dependencies.tokenStore = .inMemory(tokens)
            let logger = Logger(label: "auth-interop", level: .critical)
            provider = OAuthProvider(
                config: try server.config(tokenURL: tokenURL), http: dependencies.http, clock: dependencies.clock, logger: logger)
            let published = self.published
            runtime = AuthStoreClient(
                config: AuthConfig(provider: .oauth, tokenCallers: ["feed"]), provider: provider, dependencies: dependencies, logger: logger,
                published: published)
        }

        /// startSignIn, the browser round trip; returns the redirect URL.
        func startSignIn(_ server: OAuthTestServer) async throws -> String {
            let reply = await runtime.startSignIn()
            guard case .authorizeURL(let url) = reply else { throw TestFailure("startSignIn answered \(reply)") }
            return try await server.browse(url)
        }

        func signIn(_ server: OAuthTestServer) async throws -> AuthSnapshot {
            let reply = await runtime.completeSignIn(redirectURL: try await startSignIn(server))
            guard case .state(let snapshot) = reply else { throw TestFailure("completeSignIn answered \(reply)") }
            return snapshot
        }

        var session: Session? { tokens.value?.session }
    }

    @Test func codeFlow_withPKCE_signsIn_withRealTokens() async throws {
        try await OAuthTestServer.with { server in
            let client = try Client(server)
            try await client.runtime.start()
            let reply = await client.runtime.startSignIn()
            guard case .authorizeURL(let url) = reply else { Issue.record("startSignIn answered \(reply)"); return }
            #expect(url.contains("code_challenge_method=S256"))
            let redirect = try await server.browse(url)
            #expect(redirect.hasPrefix("\(server.base)/callback?code="))
            let snapshot = try #require(await client.runtime.completeSignIn(redirectURL: redirect).snapshot)
            #expect(snapshot.state == .authenticated)
            #expect(snapshot.user == "alice", "from the userinfo endpoint")
            #expect(snapshot.scopes == ["identity", "read"])
            #expect(snapshot.expiresAt.map { abs($0.timeIntervalSinceNow - 3600) < 60 } == true)
            #expect(await eventually { client.published.value.map(\.state) == [.signedOut, .signinInProgress, .authenticated] })
            let session = try #require(client.session)
            #expect(try await server.userinfoStatus(session.accessToken) == 200)
            #expect(session.refreshToken != nil)
            // The code is single-use: the same redirect cannot sign in twice.
            _ = await client.runtime.logout()
            _ = await client.runtime.startSignIn()
            let replay = await client.runtime.completeSignIn(redirectURL: redirect)
            #expect(replay.failure?.code == "state_mismatch")
            await client.runtime.shutdown()
        }
    }

    @Test func pkce_isCheckedByTheServer_aWrongVerifierGetsNoToken() async throws {
        try await OAuthTestServer.with { server in
            let client = try Client(server)
            let attempt = try client.provider.beginSignIn(state: "s1", verifier: Secret(RandomSource.live.token()))
            let redirect = try await server.browse(attempt.authorizeURL)
            let code = try #require(URLComponents(string: redirect)?.queryItems?.first { $0.name == "code" }?.value)
            var forged = attempt
            forged.verifier = Secret(RandomSource.live.token())
            do throws(ProviderFailure) {
                _ = try await client.provider.exchange(code: code, attempt: forged)
                Issue.record("a wrong code_verifier was accepted")
            } catch {
                #expect(error.code == "invalid_grant")
            }
        }
    }

    @Test func refresh_onDemand_getsNewTokens_andTheOldRefreshTokenIsDead() async throws {
        try await OAuthTestServer.with { server in
            let client = try Client(server)
            try await client.runtime.start()
            _ = try await client.signIn(server)
            let before = try #require(client.session)
            let reply = await client.runtime.refresh()
            #expect(reply.snapshot?.state == .authenticated)
            let after = try #require(client.session)
            #expect(after.accessToken != before.accessToken)
            #expect(after.refreshToken != before.refreshToken, "the server rotates refresh tokens")
            #expect(after.user == "alice")
            #expect(try await server.userinfoStatus(after.accessToken) == 200)
            #expect(await eventually { client.published.value.map(\.state).suffix(2) == [.refreshing, .authenticated] })
            await #expect(throws: ProviderFailure.self) { try await client.provider.refresh(before.refreshToken!, user: nil) }
            await client.runtime.shutdown()
        }
    }

    @Test func tamperedState_isRejected_beforeAnyTokenRequest_andTheRealRedirectStillWorks() async throws {
        try await OAuthTestServer.with { server in
            let client = try Client(server)
            try await client.runtime.start()
            let redirect = try await client.startSignIn(server)
            var components = try #require(URLComponents(string: redirect))
            components.queryItems = components.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "attacker-state") : $0 }
            let tampered = try #require(components.string)
            let reply = await client.runtime.completeSignIn(redirectURL: tampered)
            #expect(reply == .failure(AuthErrors.stateMismatch))
            #expect(await client.runtime.state.phase == .signinInProgress)
            #expect(try await server.stats().token_requests == 0, "the code of a forged redirect is never exchanged")
            #expect(client.session == nil)
            let real = await client.runtime.completeSignIn(redirectURL: redirect)
            #expect(real.snapshot?.state == .authenticated)
            await client.runtime.shutdown()
        }
    }

    @Test func revokedRefreshToken_signsOut_withRefreshExpired() async throws {
        try await OAuthTestServer.with { server in
            let client = try Client(server)
            try await client.runtime.start()
            _ = try await client.signIn(server)
            let session = try #require(client.session)
            try await server.revoke(session.refreshToken!)
            let reply = await client.runtime.refresh()
            #expect(reply == .failure(AuthErrors.refreshExpired))
            #expect(reply.failure?.status == 403)
            let state = await client.runtime.state
            #expect(state.phase == .signedOut)
            #expect(state.reason == "refresh_expired")
            #expect(client.tokens.value == nil)
            #expect(await eventually { client.published.value.last == AuthSnapshot(state: .signedOut, reason: "refresh_expired", provider: .oauth) })
            await client.runtime.shutdown()
        }
    }

    @Test func logout_revokesAtTheServer() async throws {
        try await OAuthTestServer.with { server in
            let client = try Client(server)
            try await client.runtime.start()
            _ = try await client.signIn(server)
            let session = try #require(client.session)
            let reply = await client.runtime.logout()
            guard case .loggedOut(let snapshot, let report) = reply else { Issue.record("logout answered \(reply)"); return }
            #expect(snapshot.state == .signedOut)
            #expect(report.revoked == ["refresh_token", "access_token"])
            #expect(try await server.userinfoStatus(session.accessToken) == 401)
            await #expect(throws: ProviderFailure.self) { try await client.provider.refresh(session.refreshToken!, user: nil) }
            #expect(try await server.stats().revocations == 2)
            await client.runtime.shutdown()
        }
    }

    @Test func providerDown_duringExchange_is503_andTheSignInWaitsForARetry() async throws {
        try await OAuthTestServer.with { server in
            let dead = try deadPort()
            let client = try Client(server, tokenURL: "http://127.0.0.1:\(dead)/token")
            try await client.runtime.start()
            let redirect = try await client.startSignIn(server)
            let reply = await client.runtime.completeSignIn(redirectURL: redirect)
            #expect(reply.failure?.code == "provider_unavailable")
            #expect(reply.failure?.status == 503)
            #expect(await client.runtime.state.phase == .signinInProgress)
            await client.runtime.shutdown()
        }
    }

    /// A loopback port nothing listens on (bound and released just now).
    func deadPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension AuthReply {
    var snapshot: AuthSnapshot? {
        if case .state(let snapshot) = self { return snapshot }
        return nil
    }

    var failure: ServiceError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
