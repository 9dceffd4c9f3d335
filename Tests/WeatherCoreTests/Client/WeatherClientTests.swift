import Foundation
import ServiceKit
import Testing

@testable import WeatherCore

/// The live clients against a local server that speaks Open-Meteo's and OpenWeatherMap's
/// documented JSON (Tests/interop/weather_server.py): answers, error bodies, a timeout, a 500,
/// a 429 and a body that is not JSON.
struct WeatherClientTests {
    let now: @Sendable () -> Date = { Fixture.fetchedAt }

    func withServer(_ body: (WeatherTestServer) async throws -> Void) async throws {
        try await WeatherTestServer.with(body)
    }

    func openMeteo(_ server: WeatherTestServer, timeout: Duration = .seconds(5)) -> WeatherClient {
        .openMeteo(OpenMeteoEndpoints(geocodingBaseURL: server.base, forecastBaseURL: server.base), http: .live(timeout: timeout), now: now)
    }

    func openWeatherMap(_ server: WeatherTestServer, key: String? = nil) throws -> WeatherClient {
        .openWeatherMap(
            OpenWeatherMapEndpoints(baseURL: server.base, apiKey: OpenWeatherMapAPIKey(key ?? server.apiKey)), table: try CityTable.embedded(),
            http: .live(timeout: .seconds(5)), now: now)
    }

    @Test func openMeteo_search_findsZurich_withItsGeoNamesID() async throws {
        try await withServer { server in
            let cities = try await openMeteo(server).searchCities("zur", 10)
            #expect(cities.map(\.id) == [2_657_896])
            #expect(cities.first?.name == "Zürich")
            #expect(cities.first?.admin1 == "Zurich")
            #expect(cities.first?.timezone == "Europe/Zurich")
            #expect(try await openMeteo(server).searchCities("qx", 10) == [])
        }
    }

    @Test func openMeteo_forecast_has48HoursAnd7Days() async throws {
        try await withServer { server in
            let forecast = try await openMeteo(server).forecast(WeatherTestData.zurich)
            #expect(forecast.cityID == WeatherTestData.zurich.id)
            #expect(forecast.hourly.count == 48)
            #expect(forecast.daily.count == 7)
            #expect(forecast.source == .openMeteo)
            #expect(forecast.fetchedAt == "2025-01-01T04:20:00Z")
            #expect(!forecast.stale)
            #expect(forecast.units.temperature == "°C")
        }
    }

    @Test(arguments: [
        ("status:500", WeatherUpstreamError.server(.openMeteo, status: 500)),
        ("status:429", WeatherUpstreamError.rateLimited(.openMeteo, retryAfter: 30)),
    ])
    func openMeteo_errorStatuses_becomeTheirErrors(mode: String, expected: WeatherUpstreamError) async throws {
        try await withServer { server in
            try await server.mode(mode)
            await #expect(throws: expected) { _ = try await openMeteo(server).searchCities("zur", 10) }
            await #expect(throws: expected) { _ = try await openMeteo(server).forecast(WeatherTestData.zurich) }
        }
    }

    @Test func openMeteo_aBodyThatIsNotJSON_isAnInvalidResponse() async throws {
        try await withServer { server in
            try await server.mode("invalid")
            let error = await #expect(throws: WeatherUpstreamError.self) { _ = try await openMeteo(server).forecast(WeatherTestData.zurich) }
            guard case .invalidResponse(.openMeteo, let detail)? = error else {
                Issue.record("expected an invalid response, got \(String(describing: error))")
                return
            }
            #expect(detail.contains("not JSON"))
            #expect(error?.isTransient == true)
        }
    }

    @Test func openMeteo_aSlowUpstream_timesOut() async throws {
        try await withServer { server in
            try await server.mode("delay:3")
            let started = ContinuousClock.now
            await #expect(throws: WeatherUpstreamError.timeout(.openMeteo)) {
                _ = try await openMeteo(server, timeout: .milliseconds(500)).searchCities("zur", 10)
            }
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }

    @Test func openMeteo_nobodyListening_isUnreachable() async throws {
        let server = try await WeatherTestServer.start()
        await server.stop()
        let error = await #expect(throws: WeatherUpstreamError.self) { _ = try await openMeteo(server).searchCities("zur", 10) }
        guard case .unreachable(.openMeteo, _)? = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(error?.code == "upstream_unreachable")
    }

    @Test func openWeatherMap_search_mapsPlacesToGeoNamesCities() async throws {
        try await withServer { server in
            let cities = try await openWeatherMap(server).searchCities("London", 5)
            #expect(cities.first?.id == 2_643_743)
            #expect(cities.first?.country == "GB")
        }
    }

    @Test func openWeatherMap_forecast_isNormalisedToTheSameShape() async throws {
        try await withServer { server in
            let london = try #require(try CityTable.embedded().city(id: 2_643_743))
            let forecast = try await openWeatherMap(server).forecast(london)
            #expect(forecast.source == .openWeatherMap)
            #expect(forecast.hourlyIntervalSeconds == 10_800)
            #expect(forecast.hourly.count == 16)
            #expect(!forecast.daily.isEmpty)
            #expect(forecast.units.weatherCode == ForecastUnits.openWeatherMapCode)
        }
    }

    @Test func openWeatherMap_aRejectedKey_saysSo_withoutTheKey() async throws {
        try await withServer { server in
            let error = await #expect(throws: WeatherUpstreamError.self) {
                _ = try await openWeatherMap(server, key: "wrong-secret-key").searchCities("London", 5)
            }
            #expect(error == .upstreamAuth(.openWeatherMap, message: "OpenWeatherMap rejected the API key"))
            #expect(error?.code == "upstream_auth")
            #expect(!"\(String(describing: error))".contains("wrong-secret-key"))
        }
    }

    @Test(arguments: [
        ("status:429", WeatherUpstreamError.rateLimited(.openWeatherMap, retryAfter: 30)),
        ("status:404", WeatherUpstreamError.notFound(.openWeatherMap, message: "city not found")),
        ("status:500", WeatherUpstreamError.server(.openWeatherMap, status: 500)),
    ])
    func openWeatherMap_errorStatuses_becomeTheirErrors(mode: String, expected: WeatherUpstreamError) async throws {
        try await withServer { server in
            try await server.mode(mode)
            let london = try #require(try CityTable.embedded().city(id: 2_643_743))
            await #expect(throws: expected) { _ = try await openWeatherMap(server).forecast(london) }
        }
    }
}
