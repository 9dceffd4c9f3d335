import AuthCore
import Bus
import BusTestSupport
import Foundation
import ServiceKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Tests/interop/oauth_server.py (authlib) as a child process on a free loopback port. Always
/// stopped: ``with(_:_:)`` stops it whatever the body does, and `deinit` kills what is left.
final class OAuthTestServer: @unchecked Sendable {
    // @unchecked: `process` is configured in init only; the output buffers are Locked.
    let process = Process()
    private let output = Locked(Data())
    private let errors = Locked(Data())
    private(set) var port = 0
    let clientID = "swiftbus-test"
    let clientSecret = "test-secret"

    var base: String { "http://127.0.0.1:\(port)" }
    var stderr: String { String(decoding: errors.value, as: UTF8.self) }

    static let script: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url = url.deletingLastPathComponent()
            let candidate = url.appendingPathComponent("Tests/interop/oauth_server.py")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        return URL(fileURLWithPath: "Tests/interop/oauth_server.py")
    }()

    /// `$PYTHON`, or `python3` on the PATH.
    static var python: String {
        let env = ProcessInfo.processInfo.environment
        if let python = env["PYTHON"], !python.isEmpty { return python }
        for dir in (env["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(dir)/python3"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return "/usr/bin/python3"
    }

    private init(arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.script.path] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let output = self.output
        let errors = self.errors
        try process.run()
        OutputReader.start(out.fileHandleForReading, onData: { data in output.withLock { $0.append(data) } }, onEnd: {})
        OutputReader.start(err.fileHandleForReading, onData: { data in errors.withLock { $0.append(data) } }, onEnd: {})
    }

    /// Starts the server and waits for its `PORT n` line.
    static func start(_ arguments: [String] = []) async throws -> OAuthTestServer {
        let server = try OAuthTestServer(arguments: arguments)
        let ready = await eventually(timeout: .seconds(20)) {
            if let port = server.announcedPort { server.port = port }
            return server.port != 0 || !server.process.isRunning
        }
        guard ready, server.port != 0 else {
            await server.stop()
            throw TestFailure("the OAuth test server did not start (pip install -r Tests/interop/requirements.txt?); stderr:\n\(server.stderr)")
        }
        return server
    }

    private var announcedPort: Int? {
        let text = String(decoding: output.value, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }) else { return nil }
        return Int(line.dropFirst(5))
    }

    /// SIGTERM, then SIGKILL if it lingers.
    func stop() async {
        guard process.isRunning else { return }
        process.terminate()
        if await !eventually(timeout: .seconds(3), { !self.process.isRunning }) {
            kill(process.processIdentifier, SIGKILL)
            _ = await eventually(timeout: .seconds(2)) { !self.process.isRunning }
        }
    }

    /// Runs `body` with a started server and always stops it.
    static func with(_ arguments: [String] = [], _ body: (OAuthTestServer) async throws -> Void) async throws {
        let server = try await start(arguments)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    // MARK: talking to it

    /// The provider settings for this server.
    func config(tokenURL: String? = nil) throws -> OAuthConfig {
        try OAuthConfig.make(flags: [
            "authorize_url": .string("\(base)/authorize"), "token_url": .string(tokenURL ?? "\(base)/token"),
            "revoke_url": .string("\(base)/revoke"), "userinfo_url": .string("\(base)/userinfo"),
            "client_id": .string(clientID), "client_secret": .string(clientSecret), "scopes": .string("identity read"),
            "redirect_uri": .string("\(base)/callback"),
        ])
    }

    /// Plays the user's browser: opens the authorize URL, follows the provider's redirect to the
    /// loopback callback and returns the URL the app receives there.
    func browse(_ authorizeURL: String) async throws -> String {
        let response = try await HTTPClient.live(followRedirects: true).send(HTTPRequest(method: "GET", url: URL(string: authorizeURL)!))
        guard response.status == 200 else { throw TestFailure("the authorize page answered \(response.status)") }
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Revokes a token as the client (the user withdrawing the app's access elsewhere).
    func revoke(_ token: Secret, hint: String = "refresh_token") async throws {
        let response = try await HTTPClient.live().send(
            HTTPRequest(
                method: "POST", url: URL(string: "\(base)/revoke")!,
                headers: [
                    "Authorization": FormEncoding.basicAuthorization(clientID: clientID, secret: Secret(clientSecret)),
                    "Content-Type": "application/x-www-form-urlencoded",
                ],
                body: FormEncoding.body([("token", token.revealed), ("token_type_hint", hint)])))
        guard response.status == 200 else { throw TestFailure("revocation answered \(response.status)") }
    }

    /// The status of a userinfo call with `token`: 200 while it is valid.
    func userinfoStatus(_ token: Secret) async throws -> Int {
        try await HTTPClient.live().send(
            HTTPRequest(
                method: "GET", url: URL(string: "\(base)/userinfo")!, headers: ["Authorization": "Bearer \(token.revealed)"])
        ).status
    }

    struct Stats: Decodable {
        var token_requests: Int
        var revocations: Int
    }

    func stats() async throws -> Stats {
        let response = try await HTTPClient.live().send(HTTPRequest(method: "GET", url: URL(string: "\(base)/stats")!))
        return try JSONDecoder().decode(Stats.self, from: response.body)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
