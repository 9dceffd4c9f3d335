import AuthCore
import Bus
import Foundation
import ServiceKit
import Testing

/// Every action in every kind of state: the phase it leads to, the error it answers with, and
/// that no state is ever left illegal or reached by an illegal transition.
struct AuthReducerTests {
    /// States to start from, each reached by driving the reducer from launch.
    enum Start: String, CaseIterable, CustomTestStringConvertible {
        case signedOut, signedOutResumable, awaitingRedirect, exchanging, signedOutLocal, checkingPassword, authenticated,
            authenticatedNoRefresh, refreshing

        var testDescription: String { rawValue }
        var provider: ProviderKind { self == .signedOutLocal || self == .checkingPassword ? .local : .oauth }

        /// The state, and the effects of the last step (to find operation numbers).
        func make() -> AuthState {
            let reducer = Fixtures.reducer(provider)
            var state = AuthState()
            func send(_ action: AuthAction) { _ = reducer.reduce(into: &state, action: action) }
            switch self {
            case .signedOut, .signedOutLocal:
                send(.launched(stored: nil))
            case .signedOutResumable:
                // Restored, then the provider is down while the access token has expired.
                send(.launched(stored: Fixtures.stored(Fixtures.session(expiresIn: -10))))
                send(.refreshFinished(operation: state.operation!, .failure(.unavailable("down"))))
            case .awaitingRedirect:
                send(.launched(stored: nil))
                send(.signInRequested(RequestID(1), Fixtures.attempt))
            case .exchanging:
                send(.launched(stored: nil))
                send(.signInRequested(RequestID(1), Fixtures.attempt))
                send(.redirectReceived(RequestID(2), redirectURL: "\(Fixtures.redirectURI)?code=CODE&state=STATE-1"))
            case .checkingPassword:
                send(.launched(stored: nil))
                send(.loginRequested(RequestID(1), username: "alice", password: Secret("correct horse")))
            case .authenticated:
                send(.launched(stored: nil))
                send(.signInRequested(RequestID(1), Fixtures.attempt))
                send(.redirectReceived(RequestID(2), redirectURL: "\(Fixtures.redirectURI)?code=CODE&state=STATE-1"))
                send(.codeExchanged(operation: state.operation!, .success(Fixtures.grant(access: "ACCESS-1", refresh: "REFRESH-1"))))
            case .authenticatedNoRefresh:
                send(.launched(stored: Fixtures.stored(Fixtures.session(refresh: nil))))
            case .refreshing:
                send(.launched(stored: nil))
                send(.signInRequested(RequestID(1), Fixtures.attempt))
                send(.redirectReceived(RequestID(2), redirectURL: "\(Fixtures.redirectURI)?code=CODE&state=STATE-1"))
                send(.codeExchanged(operation: state.operation!, .success(Fixtures.grant(access: "ACCESS-1", refresh: "REFRESH-1"))))
                send(.refreshRequested(RequestID(3)))
            }
            return state
        }
    }

    /// What happened, as an action built against the current state (results use its operation).
    enum Event: String, CaseIterable, CustomTestStringConvertible {
        case startSignIn, redirect, tamperedRedirect, deniedRedirect, login, refresh, timer, logout, state, token,
            tokenForbidden, exchangeOK, exchangeDown, exchangeRefused, passwordOK, wrongPassword, unknownUser, refreshOK,
            refreshExpired, refreshDown

        var testDescription: String { rawValue }

        func action(in state: AuthState) -> AuthAction {
            let id = RequestID(99)
            let operation = state.operation ?? 999
            switch self {
            case .startSignIn: return .signInRequested(id, Fixtures.otherAttempt)
            case .redirect: return .redirectReceived(id, redirectURL: "\(Fixtures.redirectURI)?code=CODE&state=STATE-1")
            case .tamperedRedirect: return .redirectReceived(id, redirectURL: "\(Fixtures.redirectURI)?code=CODE&state=FORGED")
            case .deniedRedirect:
                return .redirectReceived(id, redirectURL: "\(Fixtures.redirectURI)?error=access_denied&error_description=no&state=STATE-1")
            case .login: return .loginRequested(id, username: "alice", password: Secret("correct horse"))
            case .refresh: return .refreshRequested(id)
            case .timer: return .refreshTimerFired
            case .logout: return .logoutRequested(id)
            case .state: return .stateRequested(id)
            case .token: return .tokenRequested(id, caller: "feed")
            case .tokenForbidden: return .tokenRequested(id, caller: "weather")
            case .exchangeOK: return .codeExchanged(operation: operation, .success(Fixtures.grant()))
            case .exchangeDown: return .codeExchanged(operation: operation, .failure(.unavailable("connection refused")))
            case .exchangeRefused: return .codeExchanged(operation: operation, .failure(.invalidGrant("code used")))
            case .passwordOK: return .passwordChecked(operation: operation, .success(Fixtures.grant()))
            case .wrongPassword: return .passwordChecked(operation: operation, .failure(.invalidCredentials(user: "alice")))
            case .unknownUser: return .passwordChecked(operation: operation, .failure(.unknownUser("alice")))
            case .refreshOK: return .refreshFinished(operation: operation, .success(Fixtures.grant()))
            case .refreshExpired: return .refreshFinished(operation: operation, .failure(.invalidGrant("revoked")))
            case .refreshDown: return .refreshFinished(operation: operation, .failure(.unavailable("HTTP 503")))
            }
        }
    }

    /// The phase after the event and the error code answered (nil: no error reply).
    struct Outcome: Equatable, CustomStringConvertible {
        var phase: AuthPhase
        var error: String?
        var description: String { "\(phase)\(error.map { " + \($0)" } ?? "")" }
    }

    static func to(_ phase: AuthPhase, _ error: String? = nil) -> Outcome { Outcome(phase: phase, error: error) }

    static let out = AuthPhase.signedOut
    static let progress = AuthPhase.signinInProgress
    static let auth = AuthPhase.authenticated
    static let refreshing = AuthPhase.refreshing

    /// Columns: signedOut, signedOutResumable, awaitingRedirect, exchanging, signedOutLocal,
    /// checkingPassword, authenticated, authenticatedNoRefresh, refreshing.
    static let table: [Event: [Outcome]] = [
        .startSignIn: [
            to(progress), to(progress), to(progress), to(progress, "busy"), to(out, "unsupported"), to(progress, "unsupported"),
            to(auth, "already_signed_in"), to(auth, "already_signed_in"), to(refreshing, "already_signed_in"),
        ],
        .redirect: [
            to(out, "no_signin_in_progress"), to(out, "no_signin_in_progress"), to(progress), to(progress, "busy"),
            to(out, "no_signin_in_progress"), to(progress, "no_signin_in_progress"), to(auth, "no_signin_in_progress"),
            to(auth, "no_signin_in_progress"), to(refreshing, "no_signin_in_progress"),
        ],
        .tamperedRedirect: [
            to(out, "no_signin_in_progress"), to(out, "no_signin_in_progress"), to(progress, "state_mismatch"), to(progress, "busy"),
            to(out, "no_signin_in_progress"), to(progress, "no_signin_in_progress"), to(auth, "no_signin_in_progress"),
            to(auth, "no_signin_in_progress"), to(refreshing, "no_signin_in_progress"),
        ],
        .deniedRedirect: [
            to(out, "no_signin_in_progress"), to(out, "no_signin_in_progress"), to(out, "authorization_denied"), to(progress, "busy"),
            to(out, "no_signin_in_progress"), to(progress, "no_signin_in_progress"), to(auth, "no_signin_in_progress"),
            to(auth, "no_signin_in_progress"), to(refreshing, "no_signin_in_progress"),
        ],
        .login: [
            to(out, "unsupported"), to(out, "unsupported"), to(progress, "unsupported"), to(progress, "unsupported"), to(progress),
            to(progress, "busy"), to(auth, "unsupported"), to(auth, "unsupported"), to(refreshing, "unsupported"),
        ],
        .refresh: [
            to(out, "not_signed_in"), to(refreshing), to(progress, "not_signed_in"), to(progress, "not_signed_in"),
            to(out, "not_signed_in"), to(progress, "not_signed_in"), to(refreshing), to(auth, "not_refreshable"), to(refreshing),
        ],
        .timer: [to(out), to(refreshing), to(progress), to(progress), to(out), to(progress), to(refreshing), to(auth), to(refreshing)],
        .logout: [
            to(out), to(out), to(out), to(out, "cancelled"), to(out), to(out, "cancelled"), to(out), to(out), to(out, "signed_out"),
        ],
        .state: [to(out), to(out), to(progress), to(progress), to(out), to(progress), to(auth), to(auth), to(refreshing)],
        .token: [
            to(out, "not_signed_in"), to(out, "not_signed_in"), to(progress, "not_signed_in"), to(progress, "not_signed_in"),
            to(out, "not_signed_in"), to(progress, "not_signed_in"), to(auth), to(auth), to(refreshing),
        ],
        .tokenForbidden: [
            to(out, "forbidden"), to(out, "forbidden"), to(progress, "forbidden"), to(progress, "forbidden"), to(out, "forbidden"),
            to(progress, "forbidden"), to(auth, "forbidden"), to(auth, "forbidden"), to(refreshing, "forbidden"),
        ],
        .exchangeOK: [to(out), to(out), to(progress), to(auth), to(out), to(progress), to(auth), to(auth), to(refreshing)],
        .exchangeDown: [
            to(out), to(out), to(progress), to(progress, "provider_unavailable"), to(out), to(progress), to(auth), to(auth), to(refreshing),
        ],
        .exchangeRefused: [to(out), to(out), to(progress), to(out, "invalid_grant"), to(out), to(progress), to(auth), to(auth), to(refreshing)],
        .passwordOK: [to(out), to(out), to(progress), to(progress), to(out), to(auth), to(auth), to(auth), to(refreshing)],
        .wrongPassword: [
            to(out), to(out), to(progress), to(progress), to(out), to(out, "invalid_credentials"), to(auth), to(auth), to(refreshing),
        ],
        .unknownUser: [to(out), to(out), to(progress), to(progress), to(out), to(out, "unknown_user"), to(auth), to(auth), to(refreshing)],
        .refreshOK: [to(out), to(out), to(progress), to(progress), to(out), to(progress), to(auth), to(auth), to(auth)],
        .refreshExpired: [
            to(out), to(out), to(progress), to(progress), to(out), to(progress), to(auth), to(auth), to(out, "refresh_expired"),
        ],
        .refreshDown: [
            to(out), to(out), to(progress), to(progress), to(out), to(progress), to(auth), to(auth), to(auth, "provider_unavailable"),
        ],
    ]

    /// The phase changes the state machine allows (staying is always allowed).
    static let legal: Set<[AuthPhase]> = [
        [.signedOut, .signinInProgress], [.signedOut, .refreshing],
        [.signinInProgress, .authenticated], [.signinInProgress, .signedOut],
        [.authenticated, .refreshing], [.authenticated, .signedOut],
        [.refreshing, .authenticated], [.refreshing, .signedOut],
    ]

    @Test(arguments: Event.allCases, Start.allCases)
    func transition_matchesTheTable_andStaysLegal(event: Event, start: Start) throws {
        let column = try #require(Start.allCases.firstIndex(of: start))
        let expected = try #require(Self.table[event]?[column], "no table entry for \(event) in \(start)")
        var state = start.make()
        #expect(state.violations.isEmpty, "fixture \(start) is illegal: \(state.violations)")
        let before = state.phase
        let effects = Fixtures.reducer(start.provider).reduce(into: &state, action: event.action(in: state))
        let outcome = Outcome(phase: state.phase, error: effects.failureCodes.first)
        #expect(outcome == expected, "\(event) in \(start)")
        #expect(effects.failureCodes.count <= 1)
        #expect(state.violations.isEmpty, "\(event) in \(start) left \(state.violations)")
        #expect(before == state.phase || Self.legal.contains([before, state.phase]), "\(before) -> \(state.phase) is not a legal transition")
        // A snapshot is published exactly when the published state changed.
        let changed = before != state.phase || start.make().snapshot(provider: start.provider) != state.snapshot(provider: start.provider)
        #expect(effects.published.count == (changed ? 1 : 0))
        #expect(!effects.changesTokenFileAfterPublishing, "\(event) in \(start) publishes before the token file is written: \(effects)")
    }

    @Test func table_exercisesEveryLegalTransition() {
        var seen: Set<[AuthPhase]> = []
        for (event, outcomes) in Self.table {
            for (start, outcome) in zip(Start.allCases, outcomes) {
                var state = start.make()
                let before = state.phase
                _ = Fixtures.reducer(start.provider).reduce(into: &state, action: event.action(in: state))
                if before != outcome.phase { seen.insert([before, outcome.phase]) }
            }
        }
        #expect(seen == Self.legal)
    }

    @Test func table_coversEveryEventAndStart() {
        #expect(Set(Self.table.keys) == Set(Event.allCases))
        #expect(Self.table.values.allSatisfy { $0.count == Start.allCases.count })
    }
}
