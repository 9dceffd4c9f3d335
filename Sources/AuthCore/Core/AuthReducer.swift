import Bus
import Foundation
import ServiceKit

/// The auth service's logic as a pure function: state + action -> new state + effects.
///
/// Legal transitions (anything else leaves the phase as it is and answers with an error):
///
/// | from | to | on |
/// |---|---|---|
/// | signedOut | signinInProgress | `startSignIn` (OAuth), `login` (local) |
/// | signedOut | refreshing | start with a stored refresh token; retry or `refresh` of a session kept after the provider was down |
/// | signedOut | authenticated | start with a stored, unexpired access token and no refresh token |
/// | signinInProgress | signinInProgress | `startSignIn` again (new attempt), code exchange failed with the provider down (retry the redirect) |
/// | signinInProgress | authenticated | code exchanged, password correct |
/// | signinInProgress | signedOut | exchange refused, wrong password, unknown user, authorization denied, `logout` |
/// | authenticated | refreshing | timer, `refresh`, `token` with an expired access token |
/// | authenticated | signedOut | `logout`, `token` with an expired access token and no refresh token |
/// | refreshing | authenticated | refreshed; or refresh failed with the provider down while the access token still works |
/// | refreshing | signedOut | refresh token rejected (`refresh_expired`), provider down with an expired access token, `logout` |
public struct AuthReducer: Sendable {
    public var config: AuthConfig
    /// The current time (expiry checks, refresh scheduling).
    public var now: @Sendable () -> Date

    public init(config: AuthConfig, now: @escaping @Sendable () -> Date) {
        self.config = config
        self.now = now
    }

    /// Applies `action`; the effects include `.publish` whenever the published snapshot changed
    /// (and once at launch): right after the token file is saved or deleted when the action
    /// does either, else first. So a state is announced only once a restart would come back to
    /// it: an `authenticated` seen on the bus has its tokens on disk, a `signed_out` has none.
    public func reduce(into state: inout AuthState, action: AuthAction) -> [AuthEffect] {
        let before = state.snapshot(provider: config.provider)
        let wasLaunched = state.launched
        var effects = step(&state, action)
        let after = state.snapshot(provider: config.provider)
        if after != before || (!wasLaunched && state.launched) {
            let lastFileEffect = effects.lastIndex { effect in
                switch effect {
                case .saveSession, .deleteSession: return true
                default: return false
                }
            }
            effects.insert(.publish(after), at: lastFileEffect.map { $0 + 1 } ?? 0)
        }
        return effects
    }

    private func step(_ s: inout AuthState, _ action: AuthAction) -> [AuthEffect] {
        switch action {
        case .launched(let stored): return launched(&s, stored)
        case .signInRequested(let id, let attempt): return signInRequested(&s, id, attempt)
        case .redirectReceived(let id, let url): return redirectReceived(&s, id, url)
        case .loginRequested(let id, let username, let password): return loginRequested(&s, id, username, password)
        case .refreshRequested(let id): return refreshRequested(&s, id)
        case .refreshTimerFired: return refreshTimerFired(&s)
        case .logoutRequested(let id): return logoutRequested(&s, id)
        case .stateRequested(let id): return [.reply(id, .state(snapshot(s)))]
        case .tokenRequested(let id, let caller): return tokenRequested(&s, id, caller)
        case .codeExchanged(let operation, let result): return signInFinished(&s, operation, result, oauth: true)
        case .passwordChecked(let operation, let result): return signInFinished(&s, operation, result, oauth: false)
        case .refreshFinished(let operation, let result): return refreshFinished(&s, operation, result)
        case .revocationFinished(let id, let report):
            guard let id else { return [] }
            return [.reply(id, .loggedOut(snapshot(s), report))]
        }
    }

    // MARK: start

    private func launched(_ s: inout AuthState, _ stored: StoredSession?) -> [AuthEffect] {
        guard !s.launched else { return [] }
        s.launched = true
        guard let stored else { return [] }
        guard stored.provider == config.provider else {
            s.reason = "provider_changed"
            return [.deleteSession]
        }
        let session = stored.session
        if session.refreshToken != nil {
            s.session = session
            return startRefresh(&s, reason: "restored")
        }
        if session.isAccessValid(at: now()) {
            s.phase = .authenticated
            s.session = session
            return []
        }
        s.reason = "session_expired"
        return [.deleteSession]
    }

    // MARK: sign-in

    private func signInRequested(_ s: inout AuthState, _ id: RequestID, _ attempt: OAuthAttempt) -> [AuthEffect] {
        guard config.provider == .oauth else {
            return [.reply(id, .failure(AuthErrors.unsupported("the local provider signs in with `login` {username, password}")))]
        }
        switch s.phase {
        case .signedOut:
            s.phase = .signinInProgress
            s.pending = PendingSignIn(method: .oauth(attempt))
            s.reason = nil
            return [.reply(id, .authorizeURL(attempt.authorizeURL))]
        case .signinInProgress:
            guard s.pending?.request == nil else { return [.reply(id, .failure(AuthErrors.busy))] }
            // A new attempt replaces the abandoned one: its redirect will no longer match.
            s.pending = PendingSignIn(method: .oauth(attempt))
            return [.reply(id, .authorizeURL(attempt.authorizeURL))]
        case .authenticated, .refreshing:
            return [.reply(id, .failure(AuthErrors.alreadySignedIn(s.session?.user)))]
        }
    }

    private func redirectReceived(_ s: inout AuthState, _ id: RequestID, _ url: String) -> [AuthEffect] {
        guard s.phase == .signinInProgress, let pending = s.pending, let attempt = pending.attempt else {
            return [.reply(id, .failure(AuthErrors.noSignInInProgress))]
        }
        guard pending.request == nil else { return [.reply(id, .failure(AuthErrors.busy))] }
        guard let components = URLComponents(string: url), components.scheme != nil else {
            return [.reply(id, .failure(AuthErrors.invalidRedirect("redirect_url is not a URL")))]
        }
        guard Self.sameEndpoint(components, attempt.redirectURI) else {
            return [
                .reply(id, .failure(AuthErrors.invalidRedirect("redirect_url does not go to the configured redirect URI \(attempt.redirectURI)")))
            ]
        }
        let items = components.queryItems ?? []
        func single(_ name: String) -> String?? {
            let values = items.filter { $0.name == name }
            if values.count > 1 { return .some(nil) }
            return values.first.map { $0.value }
        }
        guard case .some(.some(let returned)) = single("state"), Self.constantTimeEqual(returned, attempt.state) else {
            return [.reply(id, .failure(AuthErrors.stateMismatch))]
        }
        if case .some(.some(let error)) = single("error") {
            let description = single("error_description") ?? nil
            signOut(&s, reason: "authorization_denied")
            return [.reply(id, .failure(AuthErrors.authorizationDenied(error, description)))]
        }
        guard case .some(.some(let code)) = single("code"), !code.isEmpty else {
            return [.reply(id, .failure(AuthErrors.invalidRedirect("the redirect has no (single) code parameter")))]
        }
        let operation = startOperation(&s)
        s.pending?.request = id
        return [.exchangeCode(operation: operation, code: code, attempt: attempt)]
    }

    private func loginRequested(_ s: inout AuthState, _ id: RequestID, _ username: String, _ password: Secret) -> [AuthEffect] {
        guard config.provider == .local else {
            return [
                .reply(id, .failure(AuthErrors.unsupported("the \(config.provider.rawValue) provider signs in with startSignIn and completeSignIn")))
            ]
        }
        switch s.phase {
        case .signedOut:
            s.phase = .signinInProgress
            s.pending = PendingSignIn(method: .password(username: username), request: id)
            s.reason = nil
            let operation = startOperation(&s)
            return [.checkPassword(operation: operation, username: username, password: password)]
        case .signinInProgress:
            return [.reply(id, .failure(AuthErrors.busy))]
        case .authenticated, .refreshing:
            return [.reply(id, .failure(AuthErrors.alreadySignedIn(s.session?.user)))]
        }
    }

    /// The outcome of a code exchange or a password check.
    private func signInFinished(_ s: inout AuthState, _ operation: Int, _ result: Result<TokenGrant, ProviderFailure>, oauth: Bool) -> [AuthEffect] {
        guard s.phase == .signinInProgress, s.operation == operation, let pending = s.pending, let request = pending.request,
            (pending.attempt != nil) == oauth
        else {
            return stale(result)
        }
        s.operation = nil
        switch result {
        case .success(let grant):
            var effects = authenticate(&s, Session(grant: grant))
            effects.append(.reply(request, .state(snapshot(s))))
            return effects
        case .failure(let failure):
            if case .unavailable = failure, pending.attempt != nil {
                // The code was not used: the same redirect can be completed once the provider is back.
                s.pending?.request = nil
                return [.reply(request, .failure(AuthErrors.from(failure)))]
            }
            signOut(&s, reason: failure.code)
            return [.reply(request, .failure(AuthErrors.from(failure)))]
        }
    }

    // MARK: refresh

    private func refreshRequested(_ s: inout AuthState, _ id: RequestID) -> [AuthEffect] {
        switch s.phase {
        case .authenticated:
            guard s.session?.refreshToken != nil else { return [.reply(id, .failure(AuthErrors.notRefreshable))] }
            let effects = startRefresh(&s, reason: "requested")
            s.refreshWaiters = [id]
            return effects
        case .refreshing:
            s.refreshWaiters.append(id)
            return []
        case .signedOut:
            guard let kept = s.resumable, kept.refreshToken != nil else { return [.reply(id, .failure(AuthErrors.notSignedIn))] }
            s.resumable = nil
            s.session = kept
            let effects = startRefresh(&s, reason: "requested")
            s.refreshWaiters = [id]
            return effects
        case .signinInProgress:
            return [.reply(id, .failure(AuthErrors.notSignedIn))]
        }
    }

    private func refreshTimerFired(_ s: inout AuthState) -> [AuthEffect] {
        switch s.phase {
        case .authenticated where s.session?.refreshToken != nil:
            return startRefresh(&s, reason: "scheduled")
        case .signedOut where s.resumable?.refreshToken != nil:
            s.session = s.resumable
            s.resumable = nil
            return startRefresh(&s, reason: "retry")
        default:
            return []
        }
    }

    private func refreshFinished(_ s: inout AuthState, _ operation: Int, _ result: Result<TokenGrant, ProviderFailure>) -> [AuthEffect] {
        guard s.phase == .refreshing, s.operation == operation, let session = s.session else { return stale(result) }
        s.operation = nil
        let refreshWaiters = s.refreshWaiters
        let tokenWaiters = s.tokenWaiters
        s.refreshWaiters = []
        s.tokenWaiters = []
        switch result {
        case .success(let grant):
            var effects = authenticate(&s, session.refreshed(with: grant))
            let current = snapshot(s)
            effects += refreshWaiters.map { .reply($0, .state(current)) }
            effects += tokenWaiters.map { tokenReply($0, s.session!) }
            return effects
        case .failure(let failure) where !failure.isTransient:
            signOut(&s, reason: isInvalidGrant(failure) ? "refresh_expired" : failure.code)
            let error = AuthErrors.from(failure, refreshing: true)
            return [.deleteSession, .cancelRefreshTimer] + (refreshWaiters + tokenWaiters).map { .reply($0, .failure(error)) }
        case .failure(let failure):
            let error = AuthErrors.from(failure, refreshing: true)
            if session.isAccessValid(at: now()) {
                // The access token still works: stay signed in and try again soon.
                s.phase = .authenticated
                s.reason = failure.code
                let retry = min(config.retryInterval, refreshDelay(session) ?? config.retryInterval)
                return [.scheduleRefresh(after: retry)] + refreshWaiters.map { .reply($0, .failure(error)) }
                    + tokenWaiters.map { tokenReply($0, session) }
            }
            // Nothing usable now, but the refresh token may still be good: keep it (memory and
            // file) and retry, so a provider outage does not cost the user their sign-in.
            signOut(&s, reason: failure.code)
            s.resumable = session
            return [.scheduleRefresh(after: config.retryInterval)] + (refreshWaiters + tokenWaiters).map { .reply($0, .failure(error)) }
        }
    }

    private func isInvalidGrant(_ failure: ProviderFailure) -> Bool {
        if case .invalidGrant = failure { return true }
        return false
    }

    // MARK: logout, token

    private func logoutRequested(_ s: inout AuthState, _ id: RequestID) -> [AuthEffect] {
        var effects: [AuthEffect] = []
        if let waiting = s.pending?.request { effects.append(.reply(waiting, .failure(AuthErrors.cancelled))) }
        effects += (s.refreshWaiters + s.tokenWaiters).map { .reply($0, .failure(AuthErrors.signedOutMeanwhile)) }
        let tokens = (s.session ?? s.resumable)?.revocable ?? []
        let alreadyOut = s.phase == .signedOut && s.resumable == nil
        signOut(&s, reason: alreadyOut ? s.reason : "logout")
        s.resumable = nil
        s.refreshWaiters = []
        s.tokenWaiters = []
        effects += [.cancelRefreshTimer, .deleteSession]
        if tokens.isEmpty {
            effects.append(.reply(id, .loggedOut(snapshot(s), RevocationReport())))
        } else {
            effects.append(.revoke(id, tokens))
        }
        return effects
    }

    private func tokenRequested(_ s: inout AuthState, _ id: RequestID, _ caller: String?) -> [AuthEffect] {
        guard let caller, config.tokenCallers.contains(caller) else {
            return [.reply(id, .failure(AuthErrors.notAllowed(caller)))]
        }
        switch s.phase {
        case .authenticated:
            guard let session = s.session else { return [.reply(id, .failure(AuthErrors.notSignedIn))] }
            if session.isAccessValid(at: now()) { return [tokenReply(id, session)] }
            if session.refreshToken != nil {
                let effects = startRefresh(&s, reason: "expired")
                s.tokenWaiters = [id]
                return effects
            }
            signOut(&s, reason: "session_expired")
            return [.deleteSession, .cancelRefreshTimer, .reply(id, .failure(AuthErrors.sessionExpired))]
        case .refreshing:
            s.tokenWaiters.append(id)
            return []
        case .signedOut, .signinInProgress:
            return [.reply(id, .failure(AuthErrors.notSignedIn))]
        }
    }

    // MARK: helpers

    private func snapshot(_ s: AuthState) -> AuthSnapshot { s.snapshot(provider: config.provider) }

    private func tokenReply(_ id: RequestID, _ session: Session) -> AuthEffect {
        .reply(id, .token(session.accessToken, expiresAt: session.expiresAt, user: session.user))
    }

    private func startOperation(_ s: inout AuthState) -> Int {
        let operation = s.nextOperation
        s.nextOperation += 1
        s.operation = operation
        return operation
    }

    /// `authenticated` or `signedOut` with a session in `s.session`: moves to `refreshing`.
    private func startRefresh(_ s: inout AuthState, reason: String) -> [AuthEffect] {
        guard let session = s.session, let refreshToken = session.refreshToken else { return [] }
        s.phase = .refreshing
        s.reason = reason
        let operation = startOperation(&s)
        return [.cancelRefreshTimer, .refresh(operation: operation, refreshToken: refreshToken, user: session.user)]
    }

    private func authenticate(_ s: inout AuthState, _ session: Session) -> [AuthEffect] {
        var effects: [AuthEffect] = []
        if let superseded = s.resumable {
            effects.append(.revoke(nil, superseded.revocable))
            s.resumable = nil
        }
        s.phase = .authenticated
        s.session = session
        s.pending = nil
        s.operation = nil
        s.reason = nil
        effects.append(.saveSession(session))
        if let delay = refreshDelay(session) {
            effects.append(.scheduleRefresh(after: delay))
        } else {
            effects.append(.cancelRefreshTimer)
        }
        return effects
    }

    private func signOut(_ s: inout AuthState, reason: String?) {
        s.phase = .signedOut
        s.session = nil
        s.pending = nil
        s.operation = nil
        s.reason = reason
    }

    /// A result nobody waits for any more (logout came first): tokens it brought are revoked.
    private func stale(_ result: Result<TokenGrant, ProviderFailure>) -> [AuthEffect] {
        guard case .success(let grant) = result else { return [] }
        return [.revoke(nil, Session(grant: grant).revocable)]
    }

    /// When to refresh `session`: the refresh interval, or earlier so the access token is
    /// renewed `expiryMargin` before it expires; nil without a refresh token.
    func refreshDelay(_ session: Session) -> Duration? {
        guard session.refreshToken != nil else { return nil }
        var delay = config.refreshInterval
        if let expiresAt = session.expiresAt {
            let margin = Double(config.expiryMargin.components.seconds)
            let untilDue = max(expiresAt.timeIntervalSince(now()) - margin, 1)
            delay = min(delay, .milliseconds(Int64(untilDue * 1000)))
        }
        return delay
    }

    /// Scheme, host, port and path equal (the redirect URI may carry no query of its own).
    static func sameEndpoint(_ url: URLComponents, _ redirectURI: String) -> Bool {
        guard let expected = URLComponents(string: redirectURI) else { return false }
        return url.scheme?.lowercased() == expected.scheme?.lowercased() && url.host?.lowercased() == expected.host?.lowercased()
            && url.port == expected.port && (url.path.isEmpty ? "/" : url.path) == (expected.path.isEmpty ? "/" : expected.path)
    }

    /// Compares without an early exit, so timing does not tell how much of `state` matched.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
