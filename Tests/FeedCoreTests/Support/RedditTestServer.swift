import Bus
import BusTestSupport
import Foundation

/// Tests/interop/reddit_server.py as a child process on a free loopback port: Reddit's API
/// answering with this target's fixtures, recording each request's headers to a log.
final class RedditTestServer: @unchecked Sendable {
    // @unchecked: `process` is configured in init only; the output buffer is Locked.
    let process = Process()
    private let output = Locked(Data())
    private let errors = Locked(Data())
    let log: URL
    private(set) var port = 0

    var base: URL { URL(string: "http://127.0.0.1:\(port)")! }
    var stderr: String { String(decoding: errors.withLock { $0 }, as: UTF8.self) }

    /// One request as the server saw it.
    struct Seen: Decodable, Equatable {
        var method: String
        var path: String
        var query: [String: String]
        var authorization: String?
        var user_agent: String?
        var form: [String: String]
    }

    static func file(_ relative: String) -> URL {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url = url.deletingLastPathComponent()
            let candidate = url.appendingPathComponent(relative)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        return URL(fileURLWithPath: relative)
    }

    static var python: String {
        let env = ProcessInfo.processInfo.environment
        if let python = env["PYTHON"], !python.isEmpty { return python }
        for dir in (env["PATH"] ?? "/usr/bin").split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/python3") {
            return "\(dir)/python3"
        }
        return "/usr/bin/python3"
    }

    private init(arguments: [String]) throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("reddit-\(UUID().uuidString).log")
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments =
            [
                Self.file("Tests/interop/reddit_server.py").path, "--fixtures", Self.file("Tests/FeedCoreTests/Fixtures").path, "--log",
                log.path,
            ] + arguments
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
    static func start(_ arguments: [String] = []) async throws -> RedditTestServer {
        let server = try RedditTestServer(arguments: arguments)
        let ready = await eventually(timeout: .seconds(20)) {
            let text = String(decoding: server.output.withLock { $0 }, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }), let port = Int(line.dropFirst(5)) {
                server.port = port
            }
            return server.port != 0 || !server.process.isRunning
        }
        guard ready, server.port != 0 else {
            await server.stop()
            throw ServerFailure(description: "the Reddit test server did not start; stderr:\n\(server.stderr)")
        }
        return server
    }

    /// Runs `body` with a started server and always stops it.
    static func with(
        _ arguments: [String] = [], isolation: isolated (any Actor)? = #isolation, _ body: (RedditTestServer) async throws -> Void
    ) async throws {
        let server = try await start(arguments)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// The requests so far, in order.
    func requests() throws -> [Seen] {
        guard let data = FileManager.default.contents(atPath: log.path) else { return [] }
        return try data.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(Seen.self, from: Data($0)) }
    }

    /// Kills it (it keeps nothing worth a graceful stop) and removes the log.
    func stop() async {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            _ = await eventually(timeout: .seconds(3)) { !self.process.isRunning }
        }
        try? FileManager.default.removeItem(at: log)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

struct ServerFailure: Error, CustomStringConvertible {
    var description: String
}
