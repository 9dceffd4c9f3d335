import AuthCore
import Bus
import Foundation
import ServiceKit

/// Values shared by the reducer and runtime tests.
enum Fixtures {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let redirectURI = "http://127.0.0.1:8765/callback"
    static let attempt = OAuthAttempt(
        state: "STATE-1", verifier: Secret("VERIFIER-1"), redirectURI: redirectURI,
        authorizeURL: "https://provider.test/authorize?state=STATE-1")
    static let otherAttempt = OAuthAttempt(
        state: "STATE-2", verifier: Secret("VERIFIER-2"), redirectURI: redirectURI,
        authorizeURL: "https://provider.test/authorize?state=STATE-2")

    static func session(access: String = "ACCESS-1", refresh: String? = "REFRESH-1", expiresIn: TimeInterval = 3600) -> Session {
        Session(
            user: "alice", scopes: ["identity", "read"], accessToken: Secret(access), expiresAt: now.addingTimeInterval(expiresIn),
            refreshToken: refresh.map(Secret.init))
    }

    static func grant(access: String = "ACCESS-2", refresh: String? = "REFRESH-2", user: String? = "alice") -> TokenGrant {
        TokenGrant(
            accessToken: Secret(access), refreshToken: refresh.map(Secret.init), expiresAt: now.addingTimeInterval(3600),
            scopes: ["identity", "read"], user: user)
    }

    static func stored(_ session: Session, provider: ProviderKind = .oauth) -> StoredSession {
        StoredSession(provider: provider, session: session, savedAt: now)
    }

    static func config(_ provider: ProviderKind = .oauth) -> AuthConfig {
        AuthConfig(provider: provider, tokenCallers: ["feed"], refreshInterval: .seconds(1800), retryInterval: .seconds(60))
    }

    static func reducer(_ provider: ProviderKind = .oauth, now: Date = Fixtures.now) -> AuthReducer {
        AuthReducer(config: config(provider), now: { now })
    }
}

extension [AuthEffect] {
    /// The error codes of the failure replies among the effects.
    var failureCodes: [String] {
        compactMap {
            if case .reply(_, .failure(let error)) = $0 { return error.code }
            return nil
        }
    }

    var replies: [(RequestID, AuthReply)] {
        compactMap {
            if case .reply(let id, let reply) = $0 { return (id, reply) }
            return nil
        }
    }

    func reply(to id: RequestID) -> AuthReply? { replies.first { $0.0 == id }?.1 }

    var published: [AuthSnapshot] {
        compactMap {
            if case .publish(let snapshot) = $0 { return snapshot }
            return nil
        }
    }

    var revoked: [[RevocableToken]] {
        compactMap {
            if case .revoke(_, let tokens) = $0 { return tokens }
            return nil
        }
    }

    var saved: [Session] {
        compactMap {
            if case .saveSession(let session) = $0 { return session }
            return nil
        }
    }

    var deletesSession: Bool { contains(.deleteSession) }

    /// Whether the token file is saved or deleted after the state is published (a restart in
    /// between would come back to a state other than the one announced).
    var changesTokenFileAfterPublishing: Bool {
        guard let publish = firstIndex(where: { if case .publish = $0 { return true } else { return false } }) else { return false }
        return self[publish...].contains {
            switch $0 {
            case .saveSession, .deleteSession: return true
            default: return false
            }
        }
    }

    var scheduledDelays: [Duration] {
        compactMap {
            if case .scheduleRefresh(let delay) = $0 { return delay }
            return nil
        }
    }
}
