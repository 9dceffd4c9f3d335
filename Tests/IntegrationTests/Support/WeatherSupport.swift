import Bus
import BusTestSupport
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Binaries {
    /// The weather service executable.
    static var weather: String { path("WeatherService") }
}

/// Tests/interop/weather_server.py (Open-Meteo and OpenWeatherMap in their documented JSON) on
/// 127.0.0.1 with a free port, as a process the harness stops.
struct WeatherUpstream {
    let process: TestProcess
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    /// The `weather` options that point at this server.
    var arguments: [String] { ["--geocoding-url", base, "--open-meteo-url", base, "--openweathermap-url", base] }

    static func start(spawn: (String, [String], String) throws -> TestProcess) async throws -> WeatherUpstream {
        let script = Binaries.packageRoot.appendingPathComponent("Tests/interop/weather_server.py").path
        let fixtures = Binaries.packageRoot.appendingPathComponent("Tests/WeatherCoreTests/Fixtures").path
        let process = try spawn(Binaries.python, [script, "--fixtures", fixtures], "weather-upstream")
        var port: Int?
        _ = await eventually(timeout: .seconds(20)) {
            port = process.stdout.split(separator: "\n").first { $0.hasPrefix("PORT ") }.flatMap { Int($0.dropFirst(5)) }
            return port != nil || !process.isRunning
        }
        guard let port else { throw HarnessError("the weather test server did not start; stderr:\n\(process.stderr)") }
        return WeatherUpstream(process: process, port: port)
    }

    /// Switches how the server answers (`normal`, `status:429`, `delay:3`).
    func mode(_ mode: String) async throws {
        let url = URL(string: "\(base)/_control?mode=\(mode)")!
        let (_, response) = try await URLSession(configuration: .ephemeral).data(from: url)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw HarnessError("the weather test server refused mode \(mode)") }
    }

    /// How many requests each path got.
    func stats() async throws -> [String: Int] {
        let (data, _) = try await URLSession(configuration: .ephemeral).data(from: URL(string: "\(base)/_stats")!)
        return try JSONDecoder().decode([String: Int].self, from: data)
    }

    static func start(_ h: Harness) async throws -> WeatherUpstream {
        try await start { try h.spawn($0, $1, name: $2) }
    }
}

extension Harness {
    /// Starts `WeatherService` and waits until the kernel lists an instance from its pid.
    func startWeather(stateDirectory: String, arguments: [String]) async throws -> TestProcess {
        try await admit("weather")
        let process = try spawn(Binaries.weather, ["--state-dir", stateDirectory] + arguments, name: "weather")
        let registered = await eventually(timeout: .seconds(20)) {
            ((try? await self.instances(of: "weather")) ?? []).contains { $0.pid == Int(process.pid) } || !process.isRunning
        }
        guard registered, process.isRunning else { throw HarnessError("weather did not register; stderr:\n\(process.stderr)") }
        return process
    }
}
