import Bus
import Foundation
import ServiceKit

/// The auth service on the service kit: ``AuthReducer`` (the transition table, tested on its
/// own) as a ``Feature``, its ``AuthEffect``s turned into the kit's effects. The store
/// publishes `auth.state` whenever the snapshot changes, after the token file was written
/// (`sync` effects run first), so an `authenticated` seen on the bus has its tokens on disk.
public struct AuthFeature: Feature {
    public typealias State = AuthState

    /// What happened: the reducer's own actions, plus the requests that do not change the
    /// sign-in state (`register`) or need the shell first (`startSignIn` draws random values).
    public enum Action: Sendable, Equatable {
        case auth(AuthAction)
        case startSignInRequested(RequestID)
        case startSignInFailed(RequestID, ServiceError)
        case registerRequested(RequestID, username: String, password: Secret)
        case registerFinished(RequestID, Result<String, ServiceError>)
    }

    /// The id of the refresh timer's run effect.
    static let refreshTimer: EffectID = "refresh-timer"

    public let reducer: AuthReducer
    let provider: any IdentityProvider
    let dependencies: AuthDependencies
    let logger: Logger

    public init(config: AuthConfig, provider: any IdentityProvider, dependencies: AuthDependencies, logger: Logger) {
        reducer = AuthReducer(config: config, now: dependencies.clock.now)
        self.provider = provider
        self.dependencies = dependencies
        self.logger = logger
    }

    public func reduce(into state: inout AuthState, _ action: Action) -> Effect<Action> {
        switch action {
        case .auth(let action):
            return .merge(reducer.reduce(into: &state, action: action).map(effect))
        case .startSignInRequested(let id):
            let provider = self.provider
            let random = dependencies.random
            return .run(name: "start sign-in") { send in
                let attempt: OAuthAttempt
                do throws(ProviderFailure) {
                    attempt = try provider.beginSignIn(state: random.token(), verifier: Secret(random.token()))
                } catch {
                    await send(.startSignInFailed(id, AuthErrors.from(error)))
                    return
                }
                await send(.auth(.signInRequested(id, attempt)))
            }
        case .startSignInFailed(let id, let error):
            return .fail(id, error)
        case .registerRequested(let id, let username, let password):
            let provider = self.provider
            let logger = self.logger
            return .run(name: "register") { send in
                let result: Result<String, ServiceError>
                do throws(ProviderFailure) {
                    try await provider.register(username: username, password: password)
                    logger.info("registered a user", metadata: ["user": username])
                    result = .success(username)
                } catch {
                    result = .failure(AuthErrors.from(error))
                }
                await send(.registerFinished(id, result))
            }
        case .registerFinished(let id, .success(let user)):
            return .reply(id, AuthResponse.Registered(user: user))
        case .registerFinished(let id, .failure(let error)):
            return .fail(id, error)
        }
    }

    /// One reducer effect as a kit effect.
    func effect(_ effect: AuthEffect) -> Effect<Action> {
        let provider = self.provider
        let logger = self.logger
        switch effect {
        case .publish:
            // The store publishes `auth.state` itself when the snapshot changed.
            return .none
        case .reply(let id, let reply):
            do {
                return .reply(id, json: try reply.payload())
            } catch {
                return .fail(id, error)
            }
        case .exchangeCode(let operation, let code, let attempt):
            return operationEffect("code exchange", logger) { () async -> AuthAction in
                do throws(ProviderFailure) {
                    return .codeExchanged(operation: operation, .success(try await provider.exchange(code: code, attempt: attempt)))
                } catch {
                    return .codeExchanged(operation: operation, .failure(error))
                }
            }
        case .checkPassword(let operation, let username, let password):
            return operationEffect("password check", logger) { () async -> AuthAction in
                do throws(ProviderFailure) {
                    return .passwordChecked(operation: operation, .success(try await provider.signIn(username: username, password: password)))
                } catch {
                    return .passwordChecked(operation: operation, .failure(error))
                }
            }
        case .refresh(let operation, let refreshToken, let user):
            return operationEffect("refresh", logger) { () async -> AuthAction in
                do throws(ProviderFailure) {
                    return .refreshFinished(operation: operation, .success(try await provider.refresh(refreshToken, user: user)))
                } catch {
                    return .refreshFinished(operation: operation, .failure(error))
                }
            }
        case .revoke(let id, let tokens):
            return operationEffect("revocation", logger) { () async -> AuthAction in
                .revocationFinished(id, await provider.revoke(tokens))
            }
        case .saveSession(let session):
            let store = dependencies.tokenStore
            let stored = StoredSession(provider: reducer.config.provider, session: session, savedAt: dependencies.clock.now())
            return .sync(name: "save tokens") {
                do {
                    try store.save(stored)
                } catch {
                    logger.error("could not save the tokens: a restart will need a new sign-in", metadata: ["error": "\(error)"])
                }
            }
        case .deleteSession:
            let store = dependencies.tokenStore
            return .sync(name: "delete tokens") {
                do {
                    try store.delete()
                } catch {
                    logger.error("could not delete the token file", metadata: ["error": "\(error)"])
                }
            }
        case .scheduleRefresh(let delay):
            let clock = dependencies.clock
            return .run(id: Self.refreshTimer, cancelInFlight: true, name: "refresh timer") { send in
                logger.debug("next refresh in \(delay)")
                try await clock.sleep(delay)
                await send(.auth(.refreshTimerFired))
            }
        case .cancelRefreshTimer:
            return .cancel(Self.refreshTimer)
        }
    }

    /// A provider call off the store, its outcome sent back (and a failure logged).
    private func operationEffect(_ what: String, _ logger: Logger, _ work: @escaping @Sendable () async -> AuthAction) -> Effect<Action> {
        .run(name: what) { send in
            logger.debug("\(what) started")
            let action = await work()
            switch action {
            case .codeExchanged(_, .failure(let failure)), .passwordChecked(_, .failure(let failure)), .refreshFinished(_, .failure(let failure)):
                logger.warning("\(what) failed", metadata: ["code": failure.code, "error": failure.description])
            case .revocationFinished(_, let report) where !report.notRevoked.isEmpty:
                logger.warning(
                    "\(what): not everything was revoked", metadata: ["not_revoked": report.notRevoked.keys.sorted().joined(separator: ",")])
            default:
                logger.debug("\(what) finished")
            }
            await send(.auth(action))
        }
    }

    /// Logs each change of phase (`auth.state signedOut -> signinInProgress`), with the reason
    /// and user, never a token.
    public static func transitions(_ logger: Logger) -> Middleware<AuthFeature> {
        .hook("transitions") { record in
            guard record.before.phase != record.after.phase else { return }
            var metadata: Logger.Metadata = [:]
            if let reason = record.after.reason { metadata["reason"] = reason }
            if let user = record.after.session?.user ?? record.after.pending?.username { metadata["user"] = user }
            logger.info("auth.state \(record.before.phase) -> \(record.after.phase)", metadata: metadata)
        }
    }

    /// The auth service: its state topic and methods.
    ///
    /// | method | payload | reply |
    /// |---|---|---|
    /// | `startSignIn` | `{}` | `{"authorize_url"}`; state -> signinInProgress (oauth) |
    /// | `completeSignIn` | `{"redirect_url"}` | the `auth.state` value; state -> authenticated |
    /// | `register` | `{"username", "password"}` | `{"user"}` (local) |
    /// | `login` | `{"username", "password"}` | the `auth.state` value (local) |
    /// | `refresh` | `{}` | the `auth.state` value, after refreshing |
    /// | `logout` | `{}` | the `auth.state` value + `{"revoked": [...], "not_revoked": {kind: why}}` |
    /// | `state` | `{}` | the `auth.state` value |
    /// | `token` | `{}` | `{"access_token", "token_type": "bearer", "expires_at", "user"}`, listed callers only |
    ///
    /// Errors are structured replies: 403 `invalid_credentials`, 404 `unknown_user`, 400
    /// `state_mismatch`, 503 `provider_unavailable`, 503 `provider_error`, 403 `refresh_expired`,
    /// 403 `invalid_grant`, 403 `authorization_denied`, 403 `forbidden`, 409 `not_signed_in`,
    /// `already_signed_in`, `busy`, `no_signin_in_progress`, 400 `unsupported`, `invalid_redirect`,
    /// `invalid_request`, 409 `user_exists`.
    ///
    /// - Parameter stored: what the token file held at start (already checked to be private).
    public func definition(stored: StoredSession?) -> ServiceDefinition<AuthFeature> {
        var service = ServiceDefinition(name: "auth", feature: self, initialState: AuthState())
        service.startAction = .auth(.launched(stored: stored))
        service.clock = dependencies.clock
        let provider = reducer.config.provider
        // The truth is the token file, not persist: published, never restored.
        service.state(.value("auth.state", { $0.snapshot(provider: provider) }))
        service.method("startSignIn") { (id, _: AuthRequest.Nothing) in .startSignInRequested(id) }
        service.method("completeSignIn") { (id, input: AuthRequest.CompleteSignIn) in
            .auth(.redirectReceived(id, redirectURL: input.redirectURL))
        }
        service.method("register") { (id, input: AuthRequest.Credentials) in
            .registerRequested(id, username: input.username, password: input.password)
        }
        service.method("login") { (id, input: AuthRequest.Credentials) in
            .auth(.loginRequested(id, username: input.username, password: input.password))
        }
        service.method("refresh") { (id, _: AuthRequest.Nothing) in .auth(.refreshRequested(id)) }
        service.method("logout") { (id, _: AuthRequest.Nothing) in .auth(.logoutRequested(id)) }
        service.method("state") { (id, _: AuthRequest.Nothing) in .auth(.stateRequested(id)) }
        // The caller is the request meta's `caller`, which any client can set: without security
        // this check keeps honest services out, not a malicious one. With security on, the
        // kernel's per-identity permission for `auth.token` (ZAP User-Id) is the real gate, and
        // this list a second one.
        service.method("token", withRequest: { (id, _: AuthRequest.Nothing, request) in .auth(.tokenRequested(id, caller: request.meta.caller)) })
        service.use(Self.transitions(logger))
        return service
    }

    /// Reads the token file for the start: a malformed one is ignored (sign in again).
    /// - Throws: ``SecureFileError`` when others may read it (or it cannot be read).
    public func loadStoredSession() throws(SecureFileError) -> StoredSession? {
        var stored: StoredSession?
        do {
            stored = try dependencies.tokenStore.load()
        } catch {
            guard case .malformed = error else { throw error }
            logger.warning("ignoring the token file: sign in again", metadata: ["error": error.description])
        }
        if let stored {
            logger.info(
                "found stored tokens",
                metadata: ["provider": stored.provider.rawValue, "refresh_token": stored.session.refreshToken == nil ? "no" : "yes"])
        }
        return stored
    }
}
