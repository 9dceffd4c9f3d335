import Bus
import Foundation
import ServiceKit

/// The shell around ``AuthReducer``: turns bus requests into actions, runs the effects
/// (provider calls, the token file, the refresh timer, `auth.state` publishes) and feeds their
/// outcomes back as actions. All state changes go through the reducer, one action at a time.
public actor AuthRuntime {
    public let reducer: AuthReducer
    /// The reducer's state (for tests and diagnostics).
    public private(set) var state = AuthState()
    let provider: any IdentityProvider
    let dependencies: AuthDependencies
    let logger: Logger

    private let publish: @Sendable (AuthSnapshot) async -> Void
    private let outbox: AsyncStream<AuthSnapshot>
    private let outboxInput: AsyncStream<AuthSnapshot>.Continuation
    private var publisher: Task<Void, Never>?
    private var waiters: [RequestID: CheckedContinuation<AuthReply, Never>] = [:]
    private var nextRequest = 1
    private var refreshTimer: Task<Void, Never>?
    private var timerGeneration = 0
    private var operations: [Int: Task<Void, Never>] = [:]
    private var nextTask = 1

    /// - Parameter publish: publishes one `auth.state` value (retained); called in order, one
    ///   at a time.
    public init(
        config: AuthConfig, provider: any IdentityProvider, dependencies: AuthDependencies, logger: Logger,
        publish: @escaping @Sendable (AuthSnapshot) async -> Void
    ) {
        reducer = AuthReducer(config: config, now: dependencies.clock.now)
        self.provider = provider
        self.dependencies = dependencies
        self.logger = logger
        self.publish = publish
        (outbox, outboxInput) = AsyncStream<AuthSnapshot>.makeStream(bufferingPolicy: .unbounded)
    }

    /// Reads the token file and starts: a stored refresh token moves to `refreshing`.
    /// - Throws: ``SecureFileError`` when the token file may be read by others (or by another
    ///   user, or cannot be read): the service must not start on it.
    public func start() throws(SecureFileError) {
        let outbox = self.outbox
        let publish = self.publish
        publisher = Task.detached {
            for await snapshot in outbox { await publish(snapshot) }
        }
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
        send(.launched(stored: stored))
    }

    /// Stops the timer and the operations in flight, answers waiting requests and flushes the
    /// publishes queued so far.
    public func shutdown() async {
        refreshTimer?.cancel()
        refreshTimer = nil
        for task in operations.values { task.cancel() }
        operations = [:]
        for (_, waiter) in waiters { waiter.resume(returning: .failure(ServiceError(503, "shutting_down", "the auth service is stopping"))) }
        waiters = [:]
        outboxInput.finish()
        await publisher?.value
    }

    // MARK: requests

    /// `startSignIn`: a new `state` and PKCE verifier, the authorize URL.
    public func startSignIn() async -> AuthReply {
        let attempt: OAuthAttempt
        do {
            attempt = try provider.beginSignIn(state: dependencies.random.token(), verifier: Secret(dependencies.random.token()))
        } catch {
            return .failure(AuthErrors.from(error))
        }
        return await request { .signInRequested($0, attempt) }
    }

    public func completeSignIn(redirectURL: String) async -> AuthReply {
        await request { .redirectReceived($0, redirectURL: redirectURL) }
    }

    public func login(username: String, password: Secret) async -> AuthReply {
        await request { .loginRequested($0, username: username, password: password) }
    }

    /// `register`: creates a local user; the sign-in state does not change.
    public func register(username: String, password: Secret) async -> Result<String, ServiceError> {
        do {
            try await provider.register(username: username, password: password)
            logger.info("registered a user", metadata: ["user": username])
            return .success(username)
        } catch {
            return .failure(AuthErrors.from(error))
        }
    }

    public func refresh() async -> AuthReply { await request { .refreshRequested($0) } }
    public func logout() async -> AuthReply { await request { .logoutRequested($0) } }
    public func currentState() async -> AuthReply { await request { .stateRequested($0) } }

    /// `token`: the access token, for allowed callers only.
    public func token(caller: String?) async -> AuthReply {
        await request { .tokenRequested($0, caller: caller) }
    }

    private func request(_ make: (RequestID) -> AuthAction) async -> AuthReply {
        let id = RequestID(nextRequest)
        nextRequest += 1
        return await withCheckedContinuation { (continuation: CheckedContinuation<AuthReply, Never>) in
            waiters[id] = continuation
            send(make(id))
        }
    }

    // MARK: effects

    /// Runs one action through the reducer and performs its effects.
    func send(_ action: AuthAction) {
        let before = state.phase
        let effects = reducer.reduce(into: &state, action: action)
        if state.phase != before {
            var metadata: Logger.Metadata = [:]
            if let reason = state.reason { metadata["reason"] = reason }
            if let user = state.session?.user ?? state.pending?.username { metadata["user"] = user }
            logger.info("auth.state \(before) -> \(state.phase)", metadata: metadata)
        }
        for effect in effects { perform(effect) }
    }

    private func perform(_ effect: AuthEffect) {
        let provider = self.provider
        switch effect {
        case .publish(let snapshot):
            outboxInput.yield(snapshot)
        case .reply(let id, let reply):
            waiters.removeValue(forKey: id)?.resume(returning: reply)
        case .exchangeCode(let operation, let code, let attempt):
            spawn("code exchange") { () async -> AuthAction in
                do throws(ProviderFailure) {
                    return .codeExchanged(operation: operation, .success(try await provider.exchange(code: code, attempt: attempt)))
                } catch {
                    return .codeExchanged(operation: operation, .failure(error))
                }
            }
        case .checkPassword(let operation, let username, let password):
            spawn("password check") { () async -> AuthAction in
                do throws(ProviderFailure) {
                    return .passwordChecked(operation: operation, .success(try await provider.signIn(username: username, password: password)))
                } catch {
                    return .passwordChecked(operation: operation, .failure(error))
                }
            }
        case .refresh(let operation, let refreshToken, let user):
            spawn("refresh") { () async -> AuthAction in
                do throws(ProviderFailure) {
                    return .refreshFinished(operation: operation, .success(try await provider.refresh(refreshToken, user: user)))
                } catch {
                    return .refreshFinished(operation: operation, .failure(error))
                }
            }
        case .revoke(let id, let tokens):
            spawn("revocation") { () async -> AuthAction in
                .revocationFinished(id, await provider.revoke(tokens))
            }
        case .saveSession(let session):
            do {
                try dependencies.tokenStore.save(
                    StoredSession(provider: reducer.config.provider, session: session, savedAt: dependencies.clock.now()))
            } catch {
                logger.error("could not save the tokens: a restart will need a new sign-in", metadata: ["error": error.description])
            }
        case .deleteSession:
            do {
                try dependencies.tokenStore.delete()
            } catch {
                logger.error("could not delete the token file", metadata: ["error": error.description])
            }
        case .scheduleRefresh(let delay):
            refreshTimer?.cancel()
            timerGeneration += 1
            let generation = timerGeneration
            let clock = dependencies.clock
            logger.debug("next refresh in \(delay)")
            refreshTimer = Task {
                do {
                    try await clock.sleep(delay)
                } catch {
                    return
                }
                self.timerFired(generation)
            }
        case .cancelRefreshTimer:
            refreshTimer?.cancel()
            refreshTimer = nil
            timerGeneration += 1
        }
    }

    private func timerFired(_ generation: Int) {
        guard generation == timerGeneration else { return }
        refreshTimer = nil
        send(.refreshTimerFired)
    }

    /// Runs a provider call off the actor and feeds its outcome back.
    private func spawn(_ what: String, _ work: @escaping @Sendable () async -> AuthAction) {
        let key = nextTask
        nextTask += 1
        logger.debug("\(what) started")
        operations[key] = Task {
            let action = await work()
            self.finished(key, what, action)
        }
    }

    private func finished(_ key: Int, _ what: String, _ action: AuthAction) {
        guard operations.removeValue(forKey: key) != nil else { return }
        switch action {
        case .codeExchanged(_, .failure(let failure)), .passwordChecked(_, .failure(let failure)), .refreshFinished(_, .failure(let failure)):
            logger.warning("\(what) failed", metadata: ["code": failure.code, "error": failure.description])
        case .revocationFinished(_, let report) where !report.notRevoked.isEmpty:
            logger.warning("\(what): not everything was revoked", metadata: ["not_revoked": report.notRevoked.keys.sorted().joined(separator: ",")])
        default:
            logger.debug("\(what) finished")
        }
        send(action)
    }
}
