import Bus
import BusTestSupport
import Foundation
import Testing

/// `WeatherService` as a real process with the kernel, persist and auth, pointed at a local
/// server that speaks Open-Meteo's JSON: search, follow, SIGKILL and restore, the embedded
/// fallback and stale forecasts with the upstream stopped, bad input.
@Suite(.serialized)
struct WeatherServiceTests {
    static let zurich = 2_657_896
    static let bern = 2_661_552
    static let paris = 2_988_507
    static let london = 2_643_743

    struct City: Codable, Equatable {
        var id: Int
        var name: String
    }

    struct Search: Codable {
        var status: String
        var cities: [City]
        var source: String
        var code: String?
    }

    struct Following: Codable {
        var cities: [City]
        var units: String
    }

    struct Forecast: Codable {
        struct Hour: Codable { var time: String }
        struct Day: Codable { var date: String }
        var cityID: Int
        var hourly: [Hour]
        var daily: [Day]
        var fetchedAt: String
        var stale: Bool
        var source: String

        enum CodingKeys: String, CodingKey {
            case cityID = "city_id"
            case hourly, daily
            case fetchedAt = "fetched_at"
            case stale, source
        }
    }

    struct Refresh: Codable {
        struct Failure: Codable { var id: Int, code: String }
        var updated: [Int]
        var failed: [Failure]
    }

    static func call<T: Decodable>(_ h: Harness, _ method: String, _ body: [String: Any], as type: T.Type = T.self) async throws -> T {
        let reply = try await h.client().call(
            "weather", method, payload: Array(try JSONSerialization.data(withJSONObject: body)), timeout: .seconds(15))
        guard reply.status == 200 else {
            throw HarnessError("weather.\(method) answered \(reply.status): \(String(decoding: reply.payload, as: UTF8.self))")
        }
        return try JSONDecoder().decode(T.self, from: Data(reply.payload))
    }

    static func status(_ h: Harness, _ method: String, _ body: [String: Any]) async throws -> (Int, String) {
        let reply = try await h.client().call(
            "weather", method, payload: Array(try JSONSerialization.data(withJSONObject: body)), timeout: .seconds(15))
        return (reply.status, String(decoding: reply.payload, as: UTF8.self))
    }

    @Test func searchFollowKillRestart_keepsTheCitiesInOrderWithTheirForecasts_andFallsBackWhenTheUpstreamStops() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            try await h.startPersist(stateDirectory: state.path + "/persist")
            try await h.admit("auth")
            let auth = try h.spawn(Binaries.authService, ["--state-dir", state.path + "/auth"], name: "auth")
            let upstream = try await WeatherUpstream.start(h)
            let weatherArguments = upstream.arguments + ["--refresh-interval", "600", "--upstream-timeout", "2"]
            var weather = try await h.startWeather(stateDirectory: state.path + "/weather", arguments: weatherArguments)

            // busctl finds Zürich from "zur", through the Open-Meteo geocoder.
            let search = try await h.busctl(["call", "weather", "search", #"{"query":"zur"}"#, "--kernel", h.kernelURL])
            #expect(search.status == 0, "stderr: \(search.stderr)")
            #expect(search.stdout.contains("Zürich") && search.stdout.contains("\(Self.zurich)"), "stdout: \(search.stdout)")
            #expect(search.stdout.contains("open-meteo"))

            // Bad input: 400 with a message.
            for (method, body) in [("search", ["query": " "]), ("search", ["query": "zur", "count": 500]), ("forecast", ["id": 1])]
                as [(String, [String: Any])]
            {
                let (status, text) = try await Self.status(h, method, body)
                #expect(status == 400, "\(method) \(body): \(text)")
            }

            let first: Following = try await Self.call(h, "follow", ["id": Self.zurich])
            #expect(first.cities.map(\.id) == [Self.zurich])
            let both: Following = try await Self.call(h, "follow", ["id": Self.bern])
            #expect(both.cities.map(\.id) == [Self.zurich, Self.bern])
            let forecast: Forecast = try await Self.call(h, "forecast", ["id": Self.bern])
            #expect(forecast.cityID == Self.bern && forecast.hourly.count == 48 && forecast.daily.count == 7 && !forecast.stale)

            // Both forecasts are retained and saved by persist before the kill.
            let saved = await eventually(timeout: .seconds(10)) {
                let zurich = try? await h.persistRestore("weather.forecast.\(Self.zurich)")
                let bern = try? await h.persistRestore("weather.forecast.\(Self.bern)")
                let index = try? await h.persistRestore("weather.state")
                let followed = ((index?["payload"] as? [String: Any])?["followed"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
                return zurich != nil && bern != nil && followed == [Self.zurich, Self.bern]
            }
            #expect(saved)

            try await h.kill(weather, service: "weather")
            weather = try await h.startWeather(stateDirectory: state.path + "/weather", arguments: weatherArguments)
            let restored: Following = try await Self.call(h, "following", [:])
            #expect(restored.cities.map(\.id) == [Self.zurich, Self.bern])
            let retained = try await h.busctl(["get", "weather.>", "--kernel", h.kernelURL])
            #expect(retained.status == 0, "stderr: \(retained.stderr)")
            for topic in ["weather.state", "weather.forecast.\(Self.zurich)", "weather.forecast.\(Self.bern)"] {
                #expect(retained.stdout.contains(topic), "busctl get 'weather.>': \(retained.stdout)")
            }
            let again: Forecast = try await Self.call(h, "forecast", ["id": Self.zurich])
            #expect(again.cityID == Self.zurich && !again.stale)

            // A slow upstream holds only the calls waiting on it: `following` answers while a
            // search waits, and the search, past --upstream-timeout, answers from the table.
            let searches = try await upstream.stats()["/v1/search"] ?? 0
            try await upstream.mode("delay:4")
            let slowDone = Locked(false)
            let slow = Task {
                defer { slowDone.withLock { $0 = true } }
                return try await Self.call(h, "search", ["query": "ber"], as: Search.self)
            }
            #expect(await eventually { (try? await upstream.stats()["/v1/search"]) ?? 0 > searches })
            let during: Following = try await Self.call(h, "following", [:])
            #expect(during.cities.count == 2)
            #expect(!slowDone.withLock { $0 }, "following waited for the slow search")
            let timedOut = try await slow.value
            #expect(timedOut.source == "embedded" && timedOut.code == "timeout" && timedOut.cities.contains { $0.id == Self.bern })
            try await upstream.mode("normal")

            // The upstream stops: search answers from the embedded table, a refresh fails and
            // marks the stored forecasts stale, which is what `forecast` then serves; a city
            // with nothing stored gets 503.
            await upstream.process.stop()
            let fallback: Search = try await Self.call(h, "search", ["query": "zur"])
            #expect(fallback.source == "embedded")
            #expect(fallback.cities.first?.id == Self.zurich)
            let refresh: Refresh = try await Self.call(h, "refresh", [:])
            #expect(refresh.updated == [])
            #expect(refresh.failed.map(\.id) == [Self.zurich, Self.bern])
            #expect(refresh.failed.allSatisfy { $0.code == "upstream_unreachable" })
            let stale: Forecast = try await Self.call(h, "forecast", ["id": Self.zurich])
            #expect(stale.stale && stale.fetchedAt == again.fetchedAt)
            let (status, text) = try await Self.status(h, "forecast", ["id": Self.paris])
            #expect(status == 503 && text.contains("upstream_unreachable"), "\(text)")
            #expect(auth.isRunning)
            _ = weather
        }
    }

    @Test func openWeatherMap_searchesAndForecasts_explainsARejectedKey_andNeverPrintsTheKey() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            try await h.startPersist(stateDirectory: state.path + "/persist")
            let upstream = try await WeatherUpstream.start(h)
            let keyFile = state.path + "/owm.key"
            try Data("test-key\n".utf8).write(to: URL(fileURLWithPath: keyFile))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
            let owm = ["--provider", "openweathermap", "--openweathermap-key-file", keyFile, "--log-level", "debug"]
            var weather = try await h.startWeather(stateDirectory: state.path + "/weather", arguments: upstream.arguments + owm)

            let london: Search = try await Self.call(h, "search", ["query": "London", "count": 5])
            #expect(london.status == "normal" && london.source == "openweathermap")
            #expect(london.cities.first?.id == Self.london)
            let following: Following = try await Self.call(h, "follow", ["id": Self.london])
            #expect(following.cities.map(\.id) == [Self.london])
            let forecast: Forecast = try await Self.call(h, "forecast", ["id": Self.london])
            #expect(forecast.source == "openweathermap" && forecast.hourly.count == 16 && !forecast.stale)

            // 429: the search answers from the embedded table; a city with nothing stored gets the error.
            try await upstream.mode("status:429")
            let limited: Search = try await Self.call(h, "search", ["query": "London"])
            #expect(limited.source == "embedded" && limited.cities.first?.id == Self.london)
            let (status, text) = try await Self.status(h, "forecast", ["id": Self.paris])
            #expect(status == 503 && text.contains("rate_limited") && text.contains("retry after 30 s"), "\(text)")
            try await upstream.mode("normal")

            // A key the provider rejects, from the environment: the search says so.
            let first = weather
            first.signal(SIGTERM)
            #expect(await first.waitForExit(timeout: .seconds(10)) == 0)
            let environmentKey = ["--provider", "openweathermap", "--log-level", "debug"]
            weather = try h.spawn(
                Binaries.weather, ["--state-dir", state.path + "/weather"] + upstream.arguments + environmentKey, name: "weather",
                environment: ["OPENWEATHERMAP_API_KEY": "rejected-secret-key"])
            let registered = await eventually(timeout: .seconds(20)) {
                ((try? await h.instances(of: "weather")) ?? []).contains { $0.pid == Int(weather.pid) } || !weather.isRunning
            }
            #expect(registered && weather.isRunning, "stderr: \(weather.stderr)")
            let reply = try await h.client().call("weather", "search", payload: Array(#"{"query":"London"}"#.utf8), timeout: .seconds(15))
            let rejected = String(decoding: reply.payload, as: UTF8.self)
            #expect(rejected.contains(#""status":"failed""#) && rejected.contains("upstream_auth"), "\(rejected)")
            #expect(rejected.contains("OpenWeatherMap rejected the API key"))
            for text in [rejected, weather.stderr, weather.stdout, first.stderr, first.stdout] {
                #expect(!text.contains("rejected-secret-key") && !text.contains("test-key"))
            }
        }
    }

    @Test func sigtermWhileASearchWaitsOnTheUpstream_answers503Interrupted_beforeTheDrainEnds() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            try await h.startPersist(stateDirectory: state.path + "/persist")
            let upstream = try await WeatherUpstream.start(h)
            let weather = try await h.startWeather(
                stateDirectory: state.path + "/weather", arguments: upstream.arguments + ["--upstream-timeout", "20"])
            try await upstream.mode("delay:15")
            let searches = try await upstream.stats()["/v1/search"] ?? 0
            let waiting = Task {
                try await h.client().call("weather", "search", payload: Array(#"{"query":"ber"}"#.utf8), timeout: .seconds(12))
            }
            #expect(await eventually { (try? await upstream.stats()["/v1/search"]) ?? 0 > searches })
            let clock = ContinuousClock()
            let stopping = clock.now
            weather.signal(SIGTERM)
            // The drain would cut the request off after 1.5 s; the store answers it first.
            let reply = try await waiting.value
            let text = String(decoding: reply.payload, as: UTF8.self)
            #expect(reply.status == 503 && text.contains("interrupted"), "\(reply.status) \(text)")
            #expect(clock.now - stopping < .seconds(8), "answered \(clock.now - stopping) after SIGTERM")
            #expect(await weather.waitForExit(timeout: .seconds(10)) == 0)
        }
    }

    @Test func openWeatherMap_withAKeyFileOthersMayRead_exits78_andItsKeyIsNeverPrinted() async throws {
        let state = try StateDirectory()
        defer { state.remove() }
        try await Harness.with { h in
            let keyFile = state.path + "/owm.key"
            try Data("secret-owm-key\n".utf8).write(to: URL(fileURLWithPath: keyFile))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
            try await h.admit("weather")
            let refused = try h.spawn(
                Binaries.weather, ["--state-dir", state.path, "--provider", "openweathermap", "--openweathermap-key-file", keyFile],
                name: "weather-refused")
            #expect(await refused.waitForExit(timeout: .seconds(10)) == 78)
            #expect(refused.stderr.contains("chmod 600"), "stderr: \(refused.stderr)")
            #expect(!refused.stderr.contains("secret-owm-key"))
        }
    }
}
