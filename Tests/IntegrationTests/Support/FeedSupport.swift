import Bus
import BusTestSupport
import Foundation

extension Binaries {
    /// The feed service executable.
    static var feedService: String { path("FeedService") }
}

/// Tests/interop/reddit_server.py (Reddit's API answering with FeedCore's fixtures) started
/// through the harness, so ``Harness/shutdown()`` stops it.
struct RedditServer {
    let process: TestProcess
    let port: Int
    let log: URL
    var base: String { "http://127.0.0.1:\(port)" }

    /// One request as the server saw it.
    struct Seen: Decodable {
        var method: String
        var path: String
        var query: [String: String]
        var authorization: String?
        var user_agent: String?
    }

    static func start(_ h: Harness, log: URL, arguments: [String] = []) async throws -> RedditServer {
        let script = Binaries.packageRoot.appendingPathComponent("Tests/interop/reddit_server.py").path
        let fixtures = Binaries.packageRoot.appendingPathComponent("Tests/FeedCoreTests/Fixtures").path
        let process = try h.spawn(Binaries.python, [script, "--fixtures", fixtures, "--log", log.path] + arguments, name: "reddit-server")
        var port: Int?
        _ = await eventually(timeout: .seconds(20)) {
            port = process.stdout.split(separator: "\n").first { $0.hasPrefix("PORT ") }.flatMap { Int($0.dropFirst(5)) }
            return port != nil || !process.isRunning
        }
        guard let port else { throw HarnessError("the Reddit test server did not start; stderr:\n\(process.stderr)") }
        return RedditServer(process: process, port: port, log: log)
    }

    /// Every request so far.
    func requests() throws -> [Seen] {
        guard let data = FileManager.default.contents(atPath: log.path) else { return [] }
        return try data.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(Seen.self, from: Data($0)) }
    }
}

/// `feed.user` as another process sees it.
struct FeedUserValue: Decodable, Equatable {
    struct User: Decodable, Equatable { var name: String }
    struct Subscription: Decodable, Equatable { var display_name: String }
    struct Multi: Decodable, Equatable { var name: String }
    var user: User?
    var subscriptions: [Subscription]
    var multis: [Multi]
    var fetched_at: String?
    /// Only in the `me` reply.
    var stale: Bool?
}

/// The `listing` reply.
struct ListingValue: Decodable {
    struct PostValue: Decodable {
        var name: String
        var likes: Bool?
        var saved: Bool?
    }
    /// `feed.listing.<key>`'s value.
    struct Cached: Decodable { var posts: [PostValue] }
    var key: String
    var posts: [PostValue]
    var fetched_at: String
    var stale: Bool
}

extension Harness {
    /// Starts `FeedService` pointed at `reddit` and waits until the kernel lists it.
    func startFeed(stateDirectory: URL, reddit: String) async throws -> TestProcess {
        let before = try await instances(of: "feed")
        try await admit("feed")
        let process = try spawn(
            Binaries.feedService, ["--state-dir", stateDirectory.path, "--reddit-url", reddit, "--reddit-public-url", reddit], name: "feed")
        let registered = await eventually(timeout: .seconds(20)) {
            ((try? await self.instances(of: "feed")) ?? []).count > before.count || !process.isRunning
        }
        guard registered, process.isRunning else { throw HarnessError("feed did not register; stderr:\n\(process.stderr)") }
        return process
    }

    /// Starts `AuthService` with the OAuth provider at `oauth`, letting `feed` read the token.
    func startAuthForFeed(stateDirectory: URL, oauth: OAuthServer) async throws -> TestProcess {
        try await admit("auth")
        let process = try spawn(
            Binaries.authService, ["--state-dir", stateDirectory.path, "--token-callers", "feed"] + oauth.authArguments, name: "auth",
            environment: oauth.authEnvironment)
        let registered = await eventually(timeout: .seconds(15)) {
            ((try? await self.instances(of: "auth")) ?? []).contains { $0.instance.contains("-\(process.pid)-") } || !process.isRunning
        }
        guard registered, process.isRunning else { throw HarnessError("auth did not register; stderr:\n\(process.stderr)") }
        return process
    }

    /// Whether `persist` has saved `topic`.
    func persistSaved(_ topic: String) async -> Bool {
        ((try? await persistRestore(topic)) ?? nil) != nil
    }

    /// The retained `feed.user`, decoded.
    func feedUser() async -> FeedUserValue? {
        guard let event = try? await client().retained("feed.user") else { return nil }
        return try? JSONDecoder().decode(FeedUserValue.self, from: Data(event.payload))
    }
}
