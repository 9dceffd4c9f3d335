import AuthCore
import Bus
import Foundation
import ServiceKit
import Testing

/// Sequences of actions and the effects that matter: what is published, saved, revoked,
/// scheduled and answered.
struct AuthReducerScenarioTests {
    let reducer = Fixtures.reducer()

    func run(_ state: inout AuthState, _ action: AuthAction, _ reducer: AuthReducer? = nil) -> [AuthEffect] {
        let effects = (reducer ?? self.reducer).reduce(into: &state, action: action)
        #expect(state.violations.isEmpty, "\(state.violations)")
        return effects
    }

    @Test func launch_withNothingStored_publishesSignedOutOnce() {
        var state = AuthState()
        let effects = run(&state, .launched(stored: nil))
        #expect(effects == [.publish(AuthSnapshot(state: .signedOut, provider: .oauth))])
        #expect(run(&state, .launched(stored: Fixtures.stored(Fixtures.session()))).isEmpty)
        #expect(state.phase == .signedOut)
    }

    @Test func launch_withStoredRefreshToken_refreshesThroughRefreshing() {
        var state = AuthState()
        let effects = run(&state, .launched(stored: Fixtures.stored(Fixtures.session())))
        #expect(state.phase == .refreshing)
        #expect(state.reason == "restored")
        #expect(effects.published.map(\.state) == [.refreshing])
        #expect(effects.published.first?.user == "alice")
        #expect(effects.contains(.refresh(operation: state.operation!, refreshToken: Secret("REFRESH-1"), user: "alice")))

        let done = run(&state, .refreshFinished(operation: state.operation!, .success(Fixtures.grant(refresh: nil))))
        #expect(state.phase == .authenticated)
        #expect(state.session?.accessToken == Secret("ACCESS-2"))
        #expect(state.session?.refreshToken == Secret("REFRESH-1"), "a refresh without a new refresh token keeps the old one")
        #expect(done.saved == [state.session!])
        #expect(done.published.map(\.state) == [.authenticated])
    }

    @Test func launch_failedRestore_signsOutWithTheReason_andForgetsTheTokens() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session())))
        let effects = run(&state, .refreshFinished(operation: state.operation!, .failure(.invalidGrant("revoked"))))
        #expect(state.phase == .signedOut)
        #expect(state.reason == "refresh_expired")
        #expect(effects.deletesSession)
        #expect(effects.published == [AuthSnapshot(state: .signedOut, reason: "refresh_expired", provider: .oauth)])
    }

    @Test func launch_tokensOfAnotherProvider_areDropped() {
        var state = AuthState()
        let effects = run(&state, .launched(stored: Fixtures.stored(Fixtures.session(), provider: .local)))
        #expect(state.phase == .signedOut)
        #expect(state.reason == "provider_changed")
        #expect(effects.deletesSession)
    }

    @Test func launch_expiredAccessWithoutRefreshToken_signsOut() {
        var state = AuthState()
        let effects = run(&state, .launched(stored: Fixtures.stored(Fixtures.session(refresh: nil, expiresIn: -1))))
        #expect(state.phase == .signedOut)
        #expect(state.reason == "session_expired")
        #expect(effects.deletesSession)
    }

    @Test func signIn_tamperedState_isRejected_andTheGenuineRedirectStillCompletes() {
        var state = AuthState()
        _ = run(&state, .launched(stored: nil))
        #expect(run(&state, .signInRequested(RequestID(1), Fixtures.attempt)).reply(to: RequestID(1)) == .authorizeURL(Fixtures.attempt.authorizeURL))
        for forged in [
            "\(Fixtures.redirectURI)?code=C&state=STATE-X", "\(Fixtures.redirectURI)?code=C",
            "\(Fixtures.redirectURI)?code=C&state=STATE-1&state=STATE-1",
            "\(Fixtures.redirectURI)?code=C&state=state-1",
        ] {
            let effects = run(&state, .redirectReceived(RequestID(2), redirectURL: forged))
            #expect(effects == [.reply(RequestID(2), .failure(AuthErrors.stateMismatch))], "\(forged)")
            #expect(state.phase == .signinInProgress)
        }
        let elsewhere = run(&state, .redirectReceived(RequestID(3), redirectURL: "http://evil.test/callback?code=C&state=STATE-1"))
        #expect(elsewhere.failureCodes == ["invalid_redirect"])
        let effects = run(&state, .redirectReceived(RequestID(4), redirectURL: "\(Fixtures.redirectURI)?state=STATE-1&code=GOOD"))
        #expect(effects == [.exchangeCode(operation: state.operation!, code: "GOOD", attempt: Fixtures.attempt)])
        let done = run(&state, .codeExchanged(operation: state.operation!, .success(Fixtures.grant())))
        #expect(state.phase == .authenticated)
        #expect(done.reply(to: RequestID(4)) == .state(state.snapshot(provider: .oauth)))
    }

    @Test func signIn_restart_replacesTheAttempt_soTheOldRedirectNoLongerMatches() {
        var state = AuthState()
        _ = run(&state, .launched(stored: nil))
        _ = run(&state, .signInRequested(RequestID(1), Fixtures.attempt))
        let restart = run(&state, .signInRequested(RequestID(2), Fixtures.otherAttempt))
        #expect(restart == [.reply(RequestID(2), .authorizeURL(Fixtures.otherAttempt.authorizeURL))], "no publish: the state did not change")
        let old = run(&state, .redirectReceived(RequestID(3), redirectURL: "\(Fixtures.redirectURI)?code=C&state=STATE-1"))
        #expect(old.failureCodes == ["state_mismatch"])
    }

    @Test func signIn_providerDownDuringExchange_keepsTheSignInForARetry() {
        var state = AuthState()
        _ = run(&state, .launched(stored: nil))
        _ = run(&state, .signInRequested(RequestID(1), Fixtures.attempt))
        let redirect = "\(Fixtures.redirectURI)?code=C&state=STATE-1"
        _ = run(&state, .redirectReceived(RequestID(2), redirectURL: redirect))
        let down = run(&state, .codeExchanged(operation: state.operation!, .failure(.unavailable("connection refused"))))
        #expect(down.failureCodes == ["provider_unavailable"])
        #expect(state.phase == .signinInProgress)
        let retry = run(&state, .redirectReceived(RequestID(3), redirectURL: redirect))
        #expect(retry == [.exchangeCode(operation: state.operation!, code: "C", attempt: Fixtures.attempt)])
    }

    @Test func signIn_garbageFromProvider_signsOutWithProviderError() {
        var state = AuthState()
        _ = run(&state, .launched(stored: nil))
        _ = run(&state, .signInRequested(RequestID(1), Fixtures.attempt))
        _ = run(&state, .redirectReceived(RequestID(2), redirectURL: "\(Fixtures.redirectURI)?code=C&state=STATE-1"))
        let effects = run(&state, .codeExchanged(operation: state.operation!, .failure(.badResponse("not JSON"))))
        #expect(effects.reply(to: RequestID(2)) == .failure(AuthErrors.providerError("not JSON")))
        #expect(AuthErrors.providerError("x").status == 503)
        #expect(state.phase == .signedOut)
        #expect(state.reason == "provider_error")
    }

    @Test func logout_duringExchange_cancelsIt_andRevokesTheTokensItBringsLate() {
        var state = AuthState()
        _ = run(&state, .launched(stored: nil))
        _ = run(&state, .signInRequested(RequestID(1), Fixtures.attempt))
        _ = run(&state, .redirectReceived(RequestID(2), redirectURL: "\(Fixtures.redirectURI)?code=C&state=STATE-1"))
        let operation = state.operation!
        let logout = run(&state, .logoutRequested(RequestID(3)))
        #expect(logout.reply(to: RequestID(2)) == .failure(AuthErrors.cancelled))
        #expect(logout.reply(to: RequestID(3)) == .loggedOut(state.snapshot(provider: .oauth), RevocationReport()))
        #expect(state.phase == .signedOut)
        let late = run(&state, .codeExchanged(operation: operation, .success(Fixtures.grant())))
        #expect(state.phase == .signedOut)
        #expect(late == [.revoke(nil, Session(grant: Fixtures.grant()).revocable)])
    }

    @Test func logout_revokesRefreshThenAccessToken_andRepliesWhenRevocationIsDone() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session(refresh: nil))))
        #expect(state.phase == .authenticated)
        var withRefresh = AuthState()
        _ = run(&withRefresh, .launched(stored: Fixtures.stored(Fixtures.session())))
        _ = run(&withRefresh, .refreshFinished(operation: withRefresh.operation!, .success(Fixtures.grant())))
        let effects = run(&withRefresh, .logoutRequested(RequestID(5)))
        #expect(
            effects.revoked == [
                [RevocableToken(kind: .refreshToken, token: Secret("REFRESH-2")), RevocableToken(kind: .accessToken, token: Secret("ACCESS-2"))]
            ])
        #expect(effects.deletesSession)
        #expect(effects.contains(.cancelRefreshTimer))
        #expect(effects.reply(to: RequestID(5)) == nil, "the reply waits for the revocation")
        #expect(effects.published == [AuthSnapshot(state: .signedOut, reason: "logout", provider: .oauth)])
        let report = RevocationReport(revoked: ["refresh_token"], notRevoked: ["access_token": "HTTP 503"])
        let done = run(&withRefresh, .revocationFinished(RequestID(5), report))
        #expect(done == [.reply(RequestID(5), .loggedOut(AuthSnapshot(state: .signedOut, reason: "logout", provider: .oauth), report))])
    }

    @Test func refresh_requestsWhileRefreshing_shareOneProviderCall() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session())))
        _ = run(&state, .refreshFinished(operation: state.operation!, .success(Fixtures.grant())))
        let first = run(&state, .refreshRequested(RequestID(1)))
        #expect(first.filter { if case .refresh = $0 { return true } else { return false } }.count == 1)
        #expect(run(&state, .refreshRequested(RequestID(2))).isEmpty)
        #expect(run(&state, .tokenRequested(RequestID(3), caller: "feed")).isEmpty)
        let done = run(&state, .refreshFinished(operation: state.operation!, .success(Fixtures.grant(access: "ACCESS-3", refresh: "REFRESH-3"))))
        let snapshot = state.snapshot(provider: .oauth)
        #expect(done.reply(to: RequestID(1)) == .state(snapshot))
        #expect(done.reply(to: RequestID(2)) == .state(snapshot))
        #expect(done.reply(to: RequestID(3)) == .token(Secret("ACCESS-3"), expiresAt: Fixtures.now.addingTimeInterval(3600), user: "alice"))
    }

    @Test func refresh_providerDownWhileTheAccessTokenWorks_staysAuthenticated_andRetriesSoon() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session())))
        let effects = run(&state, .refreshFinished(operation: state.operation!, .failure(.unavailable("HTTP 503"))))
        #expect(state.phase == .authenticated)
        #expect(state.reason == "provider_unavailable")
        #expect(state.session?.accessToken == Secret("ACCESS-1"))
        #expect(effects.scheduledDelays == [.seconds(60)])
        #expect(!effects.deletesSession)
    }

    @Test func refresh_providerDownWithAnExpiredAccessToken_signsOut_keepsTheRefreshToken_andResumesOnTheTimer() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session(expiresIn: -5))))
        let down = run(&state, .refreshFinished(operation: state.operation!, .failure(.unavailable("connection refused"))))
        #expect(state.phase == .signedOut)
        #expect(state.reason == "provider_unavailable")
        #expect(state.resumable?.refreshToken == Secret("REFRESH-1"))
        #expect(!down.deletesSession, "the token file stays, so a restart retries too")
        #expect(down.scheduledDelays == [.seconds(60)])
        let retry = run(&state, .refreshTimerFired)
        #expect(state.phase == .refreshing)
        #expect(state.reason == "retry")
        #expect(retry.contains(.refresh(operation: state.operation!, refreshToken: Secret("REFRESH-1"), user: "alice")))
        _ = run(&state, .refreshFinished(operation: state.operation!, .success(Fixtures.grant())))
        #expect(state.phase == .authenticated)
        #expect(state.resumable == nil)
    }

    @Test func signIn_afterAKeptSession_revokesTheKeptOne() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session(expiresIn: -5))))
        _ = run(&state, .refreshFinished(operation: state.operation!, .failure(.unavailable("down"))))
        _ = run(&state, .signInRequested(RequestID(1), Fixtures.attempt))
        _ = run(&state, .redirectReceived(RequestID(2), redirectURL: "\(Fixtures.redirectURI)?code=C&state=STATE-1"))
        let done = run(&state, .codeExchanged(operation: state.operation!, .success(Fixtures.grant())))
        #expect(done.revoked == [Fixtures.session(expiresIn: -5).revocable])
        #expect(state.resumable == nil)
    }

    @Test func token_expiredAccess_refreshesFirst_thenAnswers() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session())))
        _ = run(&state, .refreshFinished(operation: state.operation!, .success(Fixtures.grant())))
        let later = Fixtures.reducer(now: Fixtures.now.addingTimeInterval(7200))
        let effects = run(&state, .tokenRequested(RequestID(1), caller: "feed"), later)
        #expect(state.phase == .refreshing)
        #expect(state.reason == "expired")
        #expect(effects.reply(to: RequestID(1)) == nil)
        let done = run(&state, .refreshFinished(operation: state.operation!, .failure(.invalidGrant("expired"))), later)
        #expect(done.reply(to: RequestID(1)) == .failure(AuthErrors.refreshExpired))
        #expect(AuthErrors.refreshExpired.status == 403)
    }

    @Test func token_expiredAccessWithoutRefreshToken_signsOut() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session(refresh: nil, expiresIn: 10))))
        let later = Fixtures.reducer(now: Fixtures.now.addingTimeInterval(20))
        let effects = run(&state, .tokenRequested(RequestID(1), caller: "feed"), later)
        #expect(state.phase == .signedOut)
        #expect(effects.failureCodes == ["session_expired"])
        #expect(effects.deletesSession)
    }

    @Test func token_onlyForListedCallers() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session(refresh: nil))))
        #expect(run(&state, .tokenRequested(RequestID(1), caller: nil)).failureCodes == ["forbidden"])
        #expect(run(&state, .tokenRequested(RequestID(2), caller: "Feed")).failureCodes == ["forbidden"])
        #expect(
            run(&state, .tokenRequested(RequestID(3), caller: "feed")).reply(to: RequestID(3))
                == .token(Secret("ACCESS-1"), expiresAt: Fixtures.now.addingTimeInterval(3600), user: "alice"))
        var nobody = AuthState()
        let closed = AuthReducer(config: AuthConfig(provider: .oauth), now: { Fixtures.now })
        _ = run(&nobody, .launched(stored: Fixtures.stored(Fixtures.session(refresh: nil))), closed)
        #expect(run(&nobody, .tokenRequested(RequestID(4), caller: "feed"), closed).failureCodes == ["forbidden"])
    }

    @Test func refreshSchedule_isTheInterval_orEarlierBeforeExpiry() {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session())))
        let long = run(&state, .refreshFinished(operation: state.operation!, .success(Fixtures.grant())))
        #expect(long.scheduledDelays == [.seconds(1800)], "token valid 1 h: refresh after the 30 min interval")
        _ = run(&state, .refreshRequested(RequestID(1)))
        var short = Fixtures.grant()
        short.expiresAt = Fixtures.now.addingTimeInterval(600)
        let soon = run(&state, .refreshFinished(operation: state.operation!, .success(short)))
        #expect(soon.scheduledDelays == [.seconds(540)], "token valid 10 min: refresh a minute before it expires")
        _ = run(&state, .refreshRequested(RequestID(2)))
        let noRefresh = run(&state, .refreshFinished(operation: state.operation!, .success(Fixtures.grant(refresh: nil))))
        #expect(noRefresh.scheduledDelays == [.seconds(1800)], "the old refresh token is kept, so refreshes go on")
    }

    @Test func localLogin_wrongPasswordAndUnknownUser_signOutWithTheirReason() {
        let local = Fixtures.reducer(.local)
        var state = AuthState()
        _ = run(&state, .launched(stored: nil), local)
        let start = run(&state, .loginRequested(RequestID(1), username: "alice", password: Secret("nope nope")), local)
        #expect(start.published == [AuthSnapshot(state: .signinInProgress, user: "alice", provider: .local)])
        let wrong = run(&state, .passwordChecked(operation: state.operation!, .failure(.invalidCredentials(user: "alice"))), local)
        #expect(wrong.reply(to: RequestID(1)) == .failure(AuthErrors.invalidCredentials("alice")))
        #expect(AuthErrors.invalidCredentials("alice").status == 403)
        #expect(state.reason == "invalid_credentials")
        _ = run(&state, .loginRequested(RequestID(2), username: "zed", password: Secret("whatever1")), local)
        let unknown = run(&state, .passwordChecked(operation: state.operation!, .failure(.unknownUser("zed"))), local)
        #expect(unknown.reply(to: RequestID(2)) == .failure(AuthErrors.unknownUser("zed")))
        #expect(AuthErrors.unknownUser("zed").status == 404)
        #expect(state.phase == .signedOut)
    }

    @Test func snapshot_json_hasEveryField_andNoToken() throws {
        var state = AuthState()
        _ = run(&state, .launched(stored: Fixtures.stored(Fixtures.session())))
        let effects = run(&state, .refreshFinished(operation: state.operation!, .success(Fixtures.grant())))
        let snapshot = try #require(effects.published.first)
        let json = String(decoding: try JSONEncoder.bus.encode(snapshot), as: UTF8.self)
        #expect(
            json
                == #"{"expires_at":"2023-11-14T23:13:20Z","provider":"oauth","reason":null,"scopes":["identity","read"],"state":"authenticated","user":"alice"}"#
        )
        for token in ["ACCESS-1", "ACCESS-2", "REFRESH-1", "REFRESH-2"] { #expect(!json.contains(token)) }
        #expect(try JSONDecoder().decode(AuthSnapshot.self, from: Data(json.utf8)) == snapshot)
        let signedOut = String(decoding: try JSONEncoder.bus.encode(AuthSnapshot(state: .signedOut, provider: .local)), as: UTF8.self)
        #expect(signedOut == #"{"expires_at":null,"provider":"local","reason":null,"scopes":[],"state":"signedOut","user":null}"#)
    }

    @Test func secret_neverPrintsItsValue() {
        let secret = Secret("s3cr3t-token")
        let texts = [
            "\(secret)", String(describing: secret), String(reflecting: secret), "\(Fixtures.session(access: "s3cr3t-token"))",
            "\(AuthEffect.saveSession(Fixtures.session(access: "s3cr3t-token")))", "\(Fixtures.grant(access: "s3cr3t-token"))",
        ]
        for text in texts { #expect(!text.contains("s3cr3t"), "\(text)") }
        var dumped = ""
        dump(Fixtures.session(access: "s3cr3t-token"), to: &dumped)
        #expect(!dumped.contains("s3cr3t"))
    }
}
