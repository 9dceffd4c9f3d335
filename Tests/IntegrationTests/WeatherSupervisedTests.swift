import Bus
import BusTestSupport
import Foundation
import Testing

/// `weather` under `busctl up`: started with the defaults, and `busctl replace weather --binary
/// PATH` while callers loop over `forecast` and `search`: no call fails and the followed cities
/// stay as they were.
@Suite(.serialized)
struct WeatherSupervisedTests {
    /// No followed city yet, so nothing is fetched: the default upstreams are never called.
    @Test func up_startsWeatherWithTheDefaults() async throws {
        try await UpSession.with([], packageServices: ["persist", "weather"]) { s in
            let line = try #require(s.upLine("weather"), "up's output:\n\(s.up.stdout)")
            #expect(await s.registered("weather", pid: line.pid) != nil)
            let following: WeatherServiceTests.Following = try await WeatherServiceTests.call(s.harness, "following", [:])
            #expect(following.cities.isEmpty && following.units == "metric")
            #expect(s.up.stdout.contains("provider open-meteo"), "up's output:\n\(s.up.stdout)")
        }
    }

    @Test func replace_whileCallersLoopOverForecastAndSearch_failsNoCall_andKeepsTheFollowedCities() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swiftbus-weather-new-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let newBinary = folder.appendingPathComponent("WeatherService").path
        try FileManager.default.createSymbolicLink(atPath: newBinary, withDestinationPath: Binaries.weather)

        let upstream = try await WeatherUpstream.start { try TestProcess($0, $1, name: $2) }
        defer { upstream.process.signal(SIGKILL) }
        let weatherArguments = "weather=" + upstream.arguments.joined(separator: " ")
        // Under ThreadSanitizer the instrumented processes starve each other past the default
        // heartbeat expiry while they start under load (as in SupervisorTests): a 3 s heartbeat.
        let slow = TestProcess.underSanitizer
        try await UpSession.with(
            [], packageServices: ["persist", "weather"], extra: ["--service-args", weatherArguments],
            environment: slow ? ["BUS_HEARTBEAT_MS": "3000"] : [:]
        ) { s in
            let old = try #require(s.upLine("weather"), "up's output:\n\(s.up.stdout)")
            let h = s.harness
            _ = try await WeatherServiceTests.call(h, "follow", ["id": WeatherServiceTests.zurich]) as WeatherServiceTests.Following
            _ = try await WeatherServiceTests.call(h, "follow", ["id": WeatherServiceTests.bern]) as WeatherServiceTests.Following

            let results = Locked<[Result<Void, BusError>]>([])
            let done = Locked(false)
            let bus = h.client()
            let load = Task {
                await withTaskGroup(of: Void.self) { group in
                    for caller in 0..<2 {
                        group.addTask {
                            while !done.withLock({ $0 }) {
                                do throws(BusError) {
                                    if caller == 0 {
                                        let _: WeatherServiceTests.Forecast = try await bus.request(
                                            "weather", "forecast", ["id": WeatherServiceTests.zurich], timeout: .seconds(10))
                                    } else {
                                        let _: WeatherServiceTests.Search = try await bus.request(
                                            "weather", "search", ["query": "zur"], timeout: .seconds(10))
                                    }
                                    results.withLock { $0.append(.success(())) }
                                } catch {
                                    results.withLock { $0.append(.failure(error)) }
                                }
                            }
                        }
                    }
                }
            }
            defer { done.withLock { $0 = true } }
            #expect(await eventually { results.withLock { $0.count } >= 40 })
            let replaced = try await h.busctl(["replace", "weather", "--binary", newBinary, "--timeout", "15"])
            let countAtReplace = results.withLock { $0.count }
            #expect(replaced.status == 0, "stderr: \(replaced.stderr)")
            #expect(replaced.stdout.hasPrefix("replaced weather: pid \(old.pid) (drained, status 0) -> pid "), "\(replaced.stdout)")
            #expect(await eventually { results.withLock { $0.count } >= countAtReplace + 40 })
            done.withLock { $0 = true }
            await load.value

            let failures = results.withLock { $0 }.compactMap { if case .failure(let error) = $0 { return error } else { return nil } }
            #expect(failures.count == 0, "failed calls: \(failures.prefix(3))")
            let status = try await s.status()
            #expect(status["weather"]?.binary == newBinary)
            #expect(status["weather"]?.pid != old.pid)
            let following: WeatherServiceTests.Following = try await WeatherServiceTests.call(h, "following", [:])
            #expect(following.cities.map(\.id) == [WeatherServiceTests.zurich, WeatherServiceTests.bern])
        }
    }
}
