import Bus
import BusTestSupport
import Foundation
import Testing

/// `auth.state` as another process sees it (the JSON of docs: never a token field).
struct AuthStateValue: Codable, Equatable, Sendable {
    var state: String
    var user: String?
    var scopes: [String]
    var expires_at: String?
    var reason: String?
    var provider: String
}

struct AuthorizeReply: Codable, Sendable { var authorize_url: String }
struct TokenReply: Codable, Sendable { var access_token: String; var token_type: String; var user: String? }
struct LogoutReply: Codable, Sendable { var state: String; var revoked: [String] }
struct NoInput: Codable, Sendable {}

/// The auth service as a real process next to a real kernel, an authlib authorization server
/// and observers in other processes.
@Suite(.serialized)
struct AuthIntegrationTests {
    /// Starts `AuthService` and waits until the kernel lists an instance from its pid.
    func startAuth(_ h: Harness, stateDirectory: URL, arguments: [String], environment: [String: String] = [:]) async throws -> TestProcess {
        try await h.admit("auth")
        let process = try h.spawn(
            Binaries.authService, ["--state-dir", stateDirectory.path, "--token-callers", "tester"] + arguments, name: "auth",
            environment: environment)
        let registered = await eventually(timeout: .seconds(15)) {
            let instances = (try? await h.instances(of: "auth")) ?? []
            return instances.contains { $0.instance.contains("-\(process.pid)-") } || !process.isRunning
        }
        guard registered, process.isRunning else { throw HarnessError("auth did not register; stderr:\n\(process.stderr)") }
        return process
    }

    /// Waits until every `auth` worker the kernel lists is `process`'s (a killed one expires).
    func onlyInstance(_ h: Harness, _ process: TestProcess) async -> Bool {
        await eventually(timeout: .seconds(15)) {
            let instances = (try? await h.instances(of: "auth")) ?? []
            return !instances.isEmpty && instances.allSatisfy { $0.instance.contains("-\(process.pid)-") }
        }
    }

    /// Observes `auth.state` from `client` into an array, its subscription live in the kernel on
    /// return: the tests expect every change, and one published before the subscription lands
    /// would be skipped (an observer keeps only the newest).
    func observe(_ client: BusClient) async throws -> (Locked<[Observed<AuthStateValue>]>, Task<Void, Never>) {
        let seen = Locked<[Observed<AuthStateValue>]>([])
        let stream = try client.observe("auth.state", as: AuthStateValue.self)
        let task = Task { for await value in stream { seen.withLock { $0.append(value) } } }
        do {
            try await client.confirmSubscriptions()
        } catch {
            task.cancel()
            throw error
        }
        return (seen, task)
    }

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("auth-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }

    @Test func oauth_signInRefreshLogout_observedAcrossProcesses_survivesSIGKILL_andNoTokenLeaks() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stateDirectory = folder.appendingPathComponent("auth-state")
        let issued = folder.appendingPathComponent("issued.txt")
        let serverLog = folder.appendingPathComponent("oauth-server.log")
        try await Harness.with { h in
            let server = try await OAuthServer.start(h, arguments: ["--issued", issued.path, "--log", serverLog.path])
            // Everything that crosses the event plane, kept for the leak check.
            let everything = try h.client(name: "recorder").subscribe(">")
            let recording = Collector(everything)
            try await everything.confirm()

            let first = try await startAuth(h, stateDirectory: stateDirectory, arguments: server.authArguments, environment: server.authEnvironment)
            let (seen, observing) = try await observe(h.client(name: "observer"))
            defer { observing.cancel() }
            func states() -> [String] { seen.withLock { $0.map(\.value.state) } }
            #expect(await eventually { states() == ["signedOut"] })

            // Sign in through the browser round trip.
            let caller = h.client(name: "tester")
            let started: AuthorizeReply = try await caller.request("auth", "startSignIn", NoInput())
            let redirect = try await OAuthServer.browse(started.authorize_url)
            let signedIn: AuthStateValue = try await caller.request("auth", "completeSignIn", ["redirect_url": redirect], timeout: .seconds(15))
            #expect(signedIn.state == "authenticated")
            #expect(signedIn.user == "alice")
            #expect(signedIn.scopes == ["identity", "read"])
            #expect(await eventually { states() == ["signedOut", "signinInProgress", "authenticated"] })

            // Refresh on demand.
            let refreshed: AuthStateValue = try await caller.request("auth", "refresh", NoInput(), timeout: .seconds(15))
            #expect(refreshed.state == "authenticated")
            #expect(await eventually { states() == ["signedOut", "signinInProgress", "authenticated", "refreshing", "authenticated"] })
            #expect(seen.withLock { $0.last?.value.user } == "alice")

            // The token: to listed callers only.
            let token: TokenReply = try await caller.request("auth", "token", NoInput())
            #expect(token.token_type == "bearer")
            #expect(try String(contentsOf: issued, encoding: .utf8).contains(token.access_token), "the current access token from the server")
            do throws(BusError) {
                let _: TokenReply = try await h.client(name: "weather").request("auth", "token", NoInput())
                Issue.record("an unlisted caller got the token")
            } catch {
                #expect(
                    error
                        == .reply(
                            status: 403, code: "forbidden", message: "'weather' may not read the access token (auth --token-callers lists who may)"))
            }

            // A late observer gets the current state first.
            let (late, lateTask) = try await observe(h.client(name: "late-observer"))
            defer { lateTask.cancel() }
            #expect(await eventually { !late.withLock { $0.isEmpty } })
            let current = try #require(late.withLock { $0.first })
            #expect(current.value.state == "authenticated")
            #expect(current.value.user == "alice")
            #expect(current.origin == .current)

            // SIGKILL, restart: the stored refresh token brings it back.
            let tokenFile = stateDirectory.appendingPathComponent("tokens.json")
            #expect((try FileManager.default.attributesOfItem(atPath: tokenFile.path)[.posixPermissions] as? Int) == 0o600)
            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(5)) != nil)
            let second = try await startAuth(h, stateDirectory: stateDirectory, arguments: server.authArguments, environment: server.authEnvironment)
            #expect(
                await eventually(timeout: .seconds(15)) {
                    states() == ["signedOut", "signinInProgress", "authenticated", "refreshing", "authenticated", "refreshing", "authenticated"]
                })
            #expect(seen.withLock { $0.last?.value }.map { ($0.user, $0.scopes) } ?? (nil, []) == ("alice", ["identity", "read"]))
            #expect(seen.withLock { $0.dropLast().last?.value.reason } == "restored")
            #expect(await onlyInstance(h, second))
            let restored: AuthStateValue = try await caller.request("auth", "state", NoInput())
            #expect(restored.state == "authenticated")

            // Logout revokes and signs out.
            let out: LogoutReply = try await caller.request("auth", "logout", NoInput(), timeout: .seconds(15))
            #expect(out.state == "signedOut")
            #expect(out.revoked == ["refresh_token", "access_token"])
            #expect(await eventually { states().last == "signedOut" })
            #expect(
                states() == [
                    "signedOut", "signinInProgress", "authenticated", "refreshing", "authenticated", "refreshing", "authenticated", "signedOut",
                ])
            #expect(seen.withLock { $0.map(\.seq) } == Array(1...8), "one sequence across both auth processes, no gap")
            #expect(!FileManager.default.fileExists(atPath: tokenFile.path))

            // No credential the server issued appears in any log or any recorded event.
            await second.stop()
            let credentials = try String(contentsOf: issued, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(credentials.count == 7, "a code, then access and refresh tokens of sign-in, refresh and restore")
            let events = recording.all
            #expect(events.filter { $0.topic == "auth.state" }.count >= 8, "the recorder saw the auth.state events")
            recording.stop()
            let recorded = events.map {
                "\($0.topic) \(String(decoding: $0.meta.encode(), as: UTF8.self)) \(String(decoding: $0.payload, as: UTF8.self))"
            }
            let logs: [(String, String)] =
                [
                    ("auth #1 stderr", first.stderr), ("auth #1 stdout", first.stdout), ("auth #2 stderr", second.stderr),
                    ("auth #2 stdout", second.stdout), ("kernel stderr", h.kernel.stderr), ("kernel stdout", h.kernel.stdout),
                    ("oauth server stderr", server.process.stderr), ("oauth server log", (try? String(contentsOf: serverLog, encoding: .utf8)) ?? ""),
                ] + recorded.enumerated().map { ("event \($0.offset)", $0.element) }
            #expect(first.stderr.contains("auth.state signedOut -> signinInProgress"), "the logs are there to search")
            for credential in credentials + [server.clientSecret] {
                for (source, text) in logs where text.contains(credential) {
                    Issue.record("a credential (\(credential.count) chars) appears in \(source)")
                }
            }
        }
    }

    @Test func local_registerLoginErrors_restart_andATokenFileOthersCanRead() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.with { h in
            let auth = try await startAuth(h, stateDirectory: folder, arguments: [])
            let (seen, observing) = try await observe(h.client(name: "observer"))
            defer { observing.cancel() }
            func states() -> [String] { seen.withLock { $0.map(\.value.state) } }
            let caller = h.client(name: "tester")
            struct Registered: Codable { var user: String }
            let registered: Registered = try await caller.request("auth", "register", ["username": "alice", "password": "correct horse"])
            #expect(registered.user == "alice")
            func login(_ user: String, _ password: String) async -> BusError? {
                do throws(BusError) {
                    let _: AuthStateValue = try await caller.request(
                        "auth", "login", ["username": user, "password": password], timeout: .seconds(10))
                    return nil
                } catch { return error }
            }
            #expect(await login("alice", "wrong horse")?.status == 403)
            #expect(await login("bob", "correct horse") == .reply(status: 404, code: "unknown_user", message: "no user 'bob': register first"))
            #expect(await login("alice", "correct horse") == nil)
            #expect(
                await eventually {
                    states() == ["signedOut", "signinInProgress", "signedOut", "signinInProgress", "signedOut", "signinInProgress", "authenticated"]
                })
            #expect(seen.withLock { $0[2].value.reason } == "invalid_credentials")
            #expect(seen.withLock { $0[4].value.reason } == "unknown_user")

            // Graceful restart: the stored refresh token signs alice back in.
            await auth.stop()
            #expect(auth.exitStatus == 0)
            let again = try await startAuth(h, stateDirectory: folder, arguments: [])
            #expect(await eventually { states().suffix(2) == ["refreshing", "authenticated"] })
            await again.stop()

            // A token file others can read: auth refuses to start (EX_CONFIG, 78), and says why.
            let tokenFile = folder.appendingPathComponent("tokens.json")
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: tokenFile.path)
            let refused = try h.spawn(Binaries.authService, ["--state-dir", folder.path], name: "auth-refused")
            let status = await refused.waitForExit(timeout: .seconds(10))
            #expect(status == 78)
            #expect(refused.stderr.contains("group or others may read it"))
            #expect(refused.stderr.contains("chmod 600"))
        }
    }

    @Test func local_refreshTimer_refreshesWhileObserved() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.with { h in
            _ = try await startAuth(h, stateDirectory: folder, arguments: ["--refresh-interval", "0.5"])
            let (seen, observing) = try await observe(h.client(name: "observer"))
            defer { observing.cancel() }
            let caller = h.client(name: "tester")
            struct Registered: Codable { var user: String }
            let _: Registered = try await caller.request("auth", "register", ["username": "carol", "password": "correct horse"])
            let _: AuthStateValue = try await caller.request(
                "auth", "login", ["username": "carol", "password": "correct horse"], timeout: .seconds(10))
            #expect(await eventually { seen.withLock { $0.filter { $0.value.reason == "scheduled" }.count } >= 2 })
            let states = seen.withLock { $0.map(\.value.state) }
            #expect(Array(states.prefix(3)) == ["signedOut", "signinInProgress", "authenticated"])
            // After the first sign-in, the states alternate refreshing / authenticated.
            let rest = Array(states.dropFirst(3))
            #expect(zip(rest, rest.dropFirst()).allSatisfy { $0 != $1 })
        }
    }
}
