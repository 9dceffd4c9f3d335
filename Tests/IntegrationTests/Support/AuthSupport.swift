import Bus
import BusTestSupport
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Binaries {
    /// The auth service executable.
    static var authService: String { path("AuthService") }

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
}

/// Tests/interop/oauth_server.py (an authlib authorization server) started through the harness,
/// so ``Harness/shutdown()`` stops it.
struct OAuthServer {
    let process: TestProcess
    let port: Int
    let clientID = "swiftbus-test"
    let clientSecret = "test-secret"
    var base: String { "http://127.0.0.1:\(port)" }

    static func start(_ h: Harness, arguments: [String] = []) async throws -> OAuthServer {
        let script = Binaries.packageRoot.appendingPathComponent("Tests/interop/oauth_server.py").path
        let process = try h.spawn(Binaries.python, [script] + arguments, name: "oauth-server")
        var port: Int?
        _ = await eventually(timeout: .seconds(20)) {
            port = process.stdout.split(separator: "\n").first { $0.hasPrefix("PORT ") }.flatMap { Int($0.dropFirst(5)) }
            return port != nil || !process.isRunning
        }
        guard let port else {
            throw HarnessError("the OAuth test server did not start (pip install -r Tests/interop/requirements.txt?); stderr:\n\(process.stderr)")
        }
        return OAuthServer(process: process, port: port)
    }

    /// The `auth` options that point at this server; the secret goes through the environment.
    var authArguments: [String] {
        [
            "--provider", "oauth", "--oauth-authorize-url", "\(base)/authorize", "--oauth-token-url", "\(base)/token",
            "--oauth-revoke-url", "\(base)/revoke", "--oauth-userinfo-url", "\(base)/userinfo", "--oauth-client-id", clientID,
            "--oauth-scopes", "identity read", "--oauth-redirect-uri", "\(base)/callback",
        ]
    }

    var authEnvironment: [String: String] { ["AUTH_OAUTH_CLIENT_SECRET": clientSecret] }

    /// Plays the user's browser: opens the authorize URL, follows the redirect to the loopback
    /// callback, and returns the URL the app receives.
    static func browse(_ authorizeURL: String) async throws -> String {
        let session = URLSession(configuration: .ephemeral)
        let (data, response) = try await session.data(from: URL(string: authorizeURL)!)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw HarnessError("the authorize page did not redirect to the callback") }
        return String(decoding: data, as: UTF8.self)
    }
}
