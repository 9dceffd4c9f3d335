import AuthCore
import Bus
import BusTestSupport
import Foundation
import ServiceKit
import Testing

/// The runtime (reducer + effects) with the local provider in memory, a manual clock and an
/// in-memory token store: timers, restarts and publishes, without sockets.
@Suite(.serialized)
struct AuthRuntimeTests {
    final class World: Sendable {
        let clock = ManualClock()
        let tokens = TokenBox()
        let provider: LocalProvider
        let published = Locked<[AuthSnapshot]>([])

        init() throws {
            provider = try LocalProvider(usersFile: nil, hasher: .test, random: .test(), clock: .manual(clock), accessLifetime: .seconds(3600))
        }

        func runtime(tokenCallers: Set<String> = ["feed"]) -> AuthRuntime {
            let published = self.published
            return AuthRuntime(
                config: AuthConfig(provider: .local, tokenCallers: tokenCallers, refreshInterval: .seconds(1800)), provider: provider,
                dependencies: .test(clock: clock, tokens: tokens), logger: Logger(label: "auth-test", level: .critical)
            ) { snapshot in published.withLock { $0.append(snapshot) } }
        }

        var states: [AuthPhase] { published.value.map(\.state) }
    }

    @Test func login_publishesEveryStep_savesTheTokens_andHandsThemOnlyToCallers() async throws {
        let world = try World()
        let runtime = world.runtime()
        try await runtime.start()
        #expect(try await runtime.register(username: "alice", password: Secret("correct horse")).get() == "alice")
        let reply = await runtime.login(username: "alice", password: Secret("correct horse"))
        guard case .state(let snapshot) = reply else { Issue.record("login answered \(reply)"); return }
        #expect(snapshot.state == .authenticated)
        #expect(snapshot.user == "alice")
        #expect(await eventually { world.states == [.signedOut, .signinInProgress, .authenticated] })
        let stored = try #require(world.tokens.value)
        #expect(stored.provider == .local)
        #expect(await runtime.token(caller: "feed") == .token(stored.session.accessToken, expiresAt: stored.session.expiresAt, user: "alice"))
        #expect(await runtime.token(caller: "weather") == .failure(AuthErrors.notAllowed("weather")))
        await runtime.shutdown()
    }

    @Test func timer_refreshesAfterTheInterval_throughRefreshing() async throws {
        let world = try World()
        let runtime = world.runtime()
        try await runtime.start()
        _ = await runtime.register(username: "alice", password: Secret("correct horse"))
        _ = await runtime.login(username: "alice", password: Secret("correct horse"))
        let before = try #require(world.tokens.value?.session)
        #expect(await eventually { world.clock.sleepers == 1 })
        #expect(world.clock.nextDeadline == world.clock.now.addingTimeInterval(1800))
        world.clock.advance(by: .seconds(1799))
        #expect(await runtime.state.phase == .authenticated)
        world.clock.advance(by: .seconds(1))
        #expect(await eventually { world.states.suffix(2) == [.refreshing, .authenticated] })
        // The new tokens are saved by the runtime's task, not before the state is published:
        // wait for them rather than race it.
        #expect(await eventually { world.tokens.value?.session.accessToken != before.accessToken })
        let after = try #require(world.tokens.value?.session)
        #expect(after.accessToken != before.accessToken)
        #expect(after.refreshToken != before.refreshToken)
        #expect(await eventually { world.clock.sleepers == 1 }, "the next refresh is scheduled")
        await runtime.shutdown()
    }

    @Test func restart_withStoredRefreshToken_comesBackAuthenticated() async throws {
        let world = try World()
        let first = world.runtime()
        try await first.start()
        _ = await first.register(username: "alice", password: Secret("correct horse"))
        _ = await first.login(username: "alice", password: Secret("correct horse"))
        await first.shutdown()
        world.published.withLock { $0 = [] }

        let second = world.runtime()
        try await second.start()
        #expect(await eventually { world.states == [.refreshing, .authenticated] })
        #expect(world.published.value.first?.reason == "restored")
        #expect(world.published.value.last?.user == "alice")
        await second.shutdown()
    }

    @Test func restart_withRevokedRefreshToken_signsOutWithTheReason() async throws {
        let world = try World()
        let first = world.runtime()
        try await first.start()
        _ = await first.register(username: "alice", password: Secret("correct horse"))
        _ = await first.login(username: "alice", password: Secret("correct horse"))
        let session = try #require(world.tokens.value?.session)
        await first.shutdown()
        _ = await world.provider.revoke(session.revocable)
        world.published.withLock { $0 = [] }

        let second = world.runtime()
        try await second.start()
        #expect(await eventually { world.states == [.refreshing, .signedOut] })
        #expect(world.published.value.last?.reason == "refresh_expired")
        // The runtime publishes the new state, then forgets the tokens.
        #expect(await eventually { world.tokens.value == nil })
        await second.shutdown()
    }

    @Test func logout_revokes_forgetsTheTokens_andCancelsTheTimer() async throws {
        let world = try World()
        let runtime = world.runtime()
        try await runtime.start()
        _ = await runtime.register(username: "alice", password: Secret("correct horse"))
        _ = await runtime.login(username: "alice", password: Secret("correct horse"))
        let session = try #require(world.tokens.value?.session)
        #expect(await eventually { world.clock.sleepers == 1 })
        let reply = await runtime.logout()
        #expect(
            reply
                == .loggedOut(
                    AuthSnapshot(state: .signedOut, reason: "logout", provider: .local),
                    RevocationReport(revoked: ["refresh_token", "access_token"])))
        #expect(world.tokens.value == nil)
        #expect(await eventually { world.clock.sleepers == 0 })
        await #expect(throws: ProviderFailure.self) { try await world.provider.refresh(session.refreshToken!, user: "alice") }
        #expect(await eventually { world.states.last == .signedOut })
        await runtime.shutdown()
    }

    @Test func start_refusesATokenFileOthersCanRead() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try TokenStore.file(folder.file("tokens.json")).save(Fixtures.stored(Fixtures.session(), provider: .local))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.file("tokens.json").path)
        var dependencies = AuthDependencies.test()
        dependencies.tokenStore = .file(folder.file("tokens.json"))
        let runtime = AuthRuntime(
            config: AuthConfig(provider: .local), provider: try World().provider, dependencies: dependencies,
            logger: Logger(label: "auth-test", level: .critical)
        ) { _ in }
        await #expect(throws: SecureFileError.tooOpen(path: folder.file("tokens.json").path, mode: 0o644)) { try await runtime.start() }
        await runtime.shutdown()
    }
}
