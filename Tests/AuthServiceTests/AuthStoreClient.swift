import AuthCore
import Bus
import Foundation
import ServiceKit

/// The auth feature in its store, called the way the bus methods call it, with each answer
/// read back into an ``AuthReply`` (for tests that follow a sign-in step by step).
final class AuthStoreClient: Sendable {
    let store: Store<AuthFeature>
    let feature: AuthFeature

    /// - Parameter published: receives every `auth.state` value, in order.
    init(config: AuthConfig, provider: any IdentityProvider, dependencies: AuthDependencies, logger: Logger, published: Locked<[AuthSnapshot]>) {
        feature = AuthFeature(config: config, provider: provider, dependencies: dependencies, logger: logger)
        let ports = StorePorts(
            publish: { topic, payload, _, _ in
                guard topic == "auth.state" else { return }
                let snapshot = try JSONDecoder().decode(AuthSnapshot.self, from: Data(payload))
                published.withLock { $0.append(snapshot) }
            }, restore: { _ in nil })
        store = feature.definition(stored: nil).makeStore(ports: ports, logger: logger)
    }

    /// Reads the token file and sends `launched`, as the service does at start.
    func start() async throws {
        await store.start(with: .auth(.launched(stored: try feature.loadStoredSession())))
    }

    func shutdown() async { await store.shutdown() }

    var state: AuthState { get async { await store.state } }

    func startSignIn() async -> AuthReply {
        Self.read(await store.request { .startSignInRequested($0) }) {
            .authorizeURL(try JSONDecoder().decode(AuthResponse.SignInStarted.self, from: $0).authorizeURL)
        }
    }

    func completeSignIn(redirectURL: String) async -> AuthReply {
        Self.read(await store.request { .auth(.redirectReceived($0, redirectURL: redirectURL)) }, as: Self.snapshot)
    }

    func refresh() async -> AuthReply { Self.read(await store.request { .auth(.refreshRequested($0)) }, as: Self.snapshot) }

    func logout() async -> AuthReply {
        Self.read(await store.request { .auth(.logoutRequested($0)) }) {
            .loggedOut(try JSONDecoder().decode(AuthSnapshot.self, from: $0), try JSONDecoder().decode(RevocationReport.self, from: $0))
        }
    }

    static func snapshot(_ data: Data) throws -> AuthReply { .state(try JSONDecoder().decode(AuthSnapshot.self, from: data)) }

    static func read(_ result: Result<[UInt8], ServiceError>, as decode: (Data) throws -> AuthReply) -> AuthReply {
        switch result {
        case .failure(let error): return .failure(error)
        case .success(let bytes):
            do {
                return try decode(Data(bytes))
            } catch {
                return .failure(ServiceError(500, "undecodable", "\(error): \(String(decoding: bytes, as: UTF8.self))"))
            }
        }
    }
}
