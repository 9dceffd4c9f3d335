import AuthCore
import Bus
import BusTestSupport
import Foundation
import ServiceKit
import Testing

/// The auth feature run by the kit's store, with the local provider in memory, a manual clock
/// and an in-memory token store: timers, restarts and publishes, without sockets.
@Suite(.serialized)
struct AuthFeatureTests {
    final class World: Sendable {
        let clock = ManualClock()
        let tokens = TokenBox()
        let provider: LocalProvider
        let published = Locked<[AuthSnapshot]>([])

        init() throws {
            provider = try LocalProvider(usersFile: nil, hasher: .test, random: .test(), clock: .manual(clock), accessLifetime: .seconds(3600))
        }

        func feature(tokenCallers: Set<String> = ["feed"]) -> AuthFeature {
            AuthFeature(
                config: AuthConfig(provider: .local, tokenCallers: tokenCallers, refreshInterval: .seconds(1800)), provider: provider,
                dependencies: .test(clock: clock, tokens: tokens), logger: Logger(label: "auth-test", level: .critical))
        }

        /// A started store, as the service runs it: the token file read, `launched` sent.
        func store(tokenCallers: Set<String> = ["feed"]) throws -> Store<AuthFeature> {
            let feature = self.feature(tokenCallers: tokenCallers)
            let definition = feature.definition(stored: try feature.loadStoredSession())
            let published = self.published
            let ports = StorePorts(
                publish: { topic, payload, _, _ in
                    guard topic == "auth.state" else { return }
                    let snapshot = try JSONDecoder().decode(AuthSnapshot.self, from: Data(payload))
                    published.withLock { $0.append(snapshot) }
                }, restore: { _ in nil })
            return definition.makeStore(ports: ports, logger: Logger(label: "auth-test", level: .critical))
        }

        var states: [AuthPhase] { published.value.map(\.state) }
    }

    static func launch(_ world: World, tokenCallers: Set<String> = ["feed"]) async throws -> Store<AuthFeature> {
        let feature = world.feature(tokenCallers: tokenCallers)
        let store = try world.store(tokenCallers: tokenCallers)
        await store.start(with: .auth(.launched(stored: try feature.loadStoredSession())))
        return store
    }

    static func register(_ store: Store<AuthFeature>, _ user: String) async throws -> String {
        let reply = try await store.request { .registerRequested($0, username: user, password: Secret("correct horse")) }.get()
        return try JSONDecoder().decode(AuthResponse.Registered.self, from: Data(reply)).user
    }

    static func login(_ store: Store<AuthFeature>, _ user: String) async throws -> AuthSnapshot {
        let reply = try await store.request { .auth(.loginRequested($0, username: user, password: Secret("correct horse"))) }.get()
        return try JSONDecoder().decode(AuthSnapshot.self, from: Data(reply))
    }

    @Test func login_publishesEveryStep_savesTheTokens_andHandsThemOnlyToCallers() async throws {
        let world = try World()
        let store = try await Self.launch(world)
        #expect(try await Self.register(store, "alice") == "alice")
        let snapshot = try await Self.login(store, "alice")
        #expect(snapshot.state == .authenticated)
        #expect(snapshot.user == "alice")
        #expect(await eventually { world.states == [.signedOut, .signinInProgress, .authenticated] })
        let stored = try #require(world.tokens.value)
        #expect(stored.provider == .local)
        let token = try JSONDecoder().decode(
            AuthResponse.Token.self, from: Data(try await store.request { .auth(.tokenRequested($0, caller: "feed")) }.get()))
        #expect(token.accessToken == stored.session.accessToken)
        #expect(token.user == "alice")
        #expect(await store.request { .auth(.tokenRequested($0, caller: "weather")) } == .failure(AuthErrors.notAllowed("weather")))
        await store.shutdown()
    }

    @Test func timer_refreshesAfterTheInterval_throughRefreshing() async throws {
        let world = try World()
        let store = try await Self.launch(world)
        _ = try await Self.register(store, "alice")
        _ = try await Self.login(store, "alice")
        let before = try #require(world.tokens.value?.session)
        #expect(await eventually { world.clock.sleepers == 1 })
        #expect(world.clock.nextDeadline == world.clock.now.addingTimeInterval(1800))
        world.clock.advance(by: .seconds(1799))
        #expect(await store.state.phase == .authenticated)
        world.clock.advance(by: .seconds(1))
        #expect(await eventually { world.states.suffix(2) == [.refreshing, .authenticated] })
        // The new tokens are written by a `sync` effect before the state is published.
        let after = try #require(world.tokens.value?.session)
        #expect(after.accessToken != before.accessToken)
        #expect(after.refreshToken != before.refreshToken)
        #expect(await eventually { world.clock.sleepers == 1 }, "the next refresh is scheduled")
        await store.shutdown()
    }

    @Test func restart_withStoredRefreshToken_comesBackAuthenticated() async throws {
        let world = try World()
        let first = try await Self.launch(world)
        _ = try await Self.register(first, "alice")
        _ = try await Self.login(first, "alice")
        await first.shutdown()
        world.published.withLock { $0 = [] }

        let second = try await Self.launch(world)
        #expect(await eventually { world.states == [.refreshing, .authenticated] })
        #expect(world.published.value.first?.reason == "restored")
        #expect(world.published.value.last?.user == "alice")
        await second.shutdown()
    }

    @Test func restart_withRevokedRefreshToken_signsOutWithTheReason() async throws {
        let world = try World()
        let first = try await Self.launch(world)
        _ = try await Self.register(first, "alice")
        _ = try await Self.login(first, "alice")
        let session = try #require(world.tokens.value?.session)
        await first.shutdown()
        _ = await world.provider.revoke(session.revocable)
        world.published.withLock { $0 = [] }

        let second = try await Self.launch(world)
        #expect(await eventually { world.states == [.refreshing, .signedOut] })
        #expect(world.published.value.last?.reason == "refresh_expired")
        // The token file is deleted before `signedOut` is published.
        #expect(world.tokens.value == nil)
        await second.shutdown()
    }

    @Test func logout_revokes_forgetsTheTokens_andCancelsTheTimer() async throws {
        let world = try World()
        let store = try await Self.launch(world)
        _ = try await Self.register(store, "alice")
        _ = try await Self.login(store, "alice")
        let session = try #require(world.tokens.value?.session)
        #expect(await eventually { world.clock.sleepers == 1 })
        let reply = String(decoding: try await store.request { .auth(.logoutRequested($0)) }.get(), as: UTF8.self)
        #expect(reply.contains(#""revoked":["refresh_token","access_token"]"#))
        #expect(reply.contains(#""state":"signedOut""#))
        #expect(world.tokens.value == nil)
        #expect(await eventually { world.clock.sleepers == 0 })
        await #expect(throws: ProviderFailure.self) { try await world.provider.refresh(session.refreshToken!, user: "alice") }
        #expect(await eventually { world.states.last == .signedOut })
        await store.shutdown()
    }

    @Test func start_refusesATokenFileOthersCanRead() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try TokenStore.file(folder.file("tokens.json")).save(Fixtures.stored(Fixtures.session(), provider: .local))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.file("tokens.json").path)
        var dependencies = AuthDependencies.test()
        dependencies.tokenStore = .file(folder.file("tokens.json"))
        let feature = AuthFeature(
            config: AuthConfig(provider: .local), provider: try World().provider, dependencies: dependencies,
            logger: Logger(label: "auth-test", level: .critical))
        #expect(throws: SecureFileError.tooOpen(path: folder.file("tokens.json").path, mode: 0o644)) { try feature.loadStoredSession() }
    }
}
