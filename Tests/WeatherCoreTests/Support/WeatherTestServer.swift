import Bus
import BusTestSupport
import Foundation
import ServiceKit

/// Tests/interop/weather_server.py (Open-Meteo and OpenWeatherMap in their documented JSON) on
/// 127.0.0.1 with a free port, as a child process. ``with(_:)`` always stops it.
final class WeatherTestServer: @unchecked Sendable {
    // @unchecked: `process` is configured in init only; the output buffer is Locked.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let process = Process()
    private let output = Locked(Data())
    private let errors = Locked(Data())
    private(set) var port = 0
    let apiKey: String
    var base: URL { URL(string: "http://127.0.0.1:\(port)")! }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    private init(apiKey: String) throws {
        self.apiKey = apiKey
        let root = Self.packageRoot
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", root.appendingPathComponent("Tests/interop/weather_server.py").path, "--fixtures",
            root.appendingPathComponent("Tests/WeatherCoreTests/Fixtures").path, "--owm-key", apiKey,
        ]
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
    static func start(apiKey: String = "test-key") async throws -> WeatherTestServer {
        let server = try WeatherTestServer(apiKey: apiKey)
        let ready = await eventually(timeout: .seconds(20)) {
            let text = String(decoding: server.output.withLock { $0 }, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }), let port = Int(line.dropFirst(5)) {
                server.port = port
            }
            return server.port != 0 || !server.process.isRunning
        }
        guard ready, server.port != 0 else {
            await server.stop()
            let stderr = String(decoding: server.errors.withLock { $0 }, as: UTF8.self)
            throw Failure(description: "the weather test server did not start; stderr:\n\(stderr)")
        }
        return server
    }

    /// Runs `body` with a started server and always stops it.
    static func with(_ body: (WeatherTestServer) async throws -> Void) async throws {
        let server = try await start()
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Switches how the server answers (`normal`, `status:500`, `invalid`, `delay:3`).
    func mode(_ mode: String) async throws {
        var components = URLComponents(url: base.appendingPathComponent("_control"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "mode", value: mode)]
        let response = try await HTTPClient.live(timeout: .seconds(5)).send(HTTPRequest(method: "GET", url: components.url!))
        guard response.status == 200 else { throw Failure(description: "the weather test server refused mode \(mode): HTTP \(response.status)") }
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
}
