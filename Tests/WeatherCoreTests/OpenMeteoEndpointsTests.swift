import Foundation
import Testing

@testable import WeatherCore

struct OpenMeteoEndpointsTests {
    @Test func search_withDefaults_buildsDocumentedURL() {
        let request = OpenMeteoEndpoints().search(name: "shang", count: 10)
        #expect(request.url.absoluteString == "https://geocoding-api.open-meteo.com/v1/search?name=shang&count=10&language=en")
        #expect(request.provider == .openMeteo)
    }

    @Test func search_whenNameHasSpacesAndPlus_percentEncodesThem() {
        let request = OpenMeteoEndpoints().search(name: "São Paulo+&x", count: 5)
        #expect(request.url.query == "name=S%C3%A3o%20Paulo%2B%26x&count=5&language=en")
    }

    @Test func search_whenCountOutOfRange_clampsTo1Through100() {
        let endpoints = OpenMeteoEndpoints()
        #expect(endpoints.search(name: "ab", count: 0).url.query?.contains("count=1&") == true)
        #expect(endpoints.search(name: "ab", count: 500).url.query?.contains("count=100&") == true)
    }

    @Test func forecast_withBaseURLPath_appendsPathAndQuery() throws {
        let base = try #require(URL(string: "http://127.0.0.1:8080/proxy/"))
        let request = OpenMeteoEndpoints(forecastBaseURL: base).forecast(latitude: 31.22222, longitude: -0.000001)
        let components = try #require(URLComponents(url: request.url, resolvingAgainstBaseURL: false))
        #expect(components.host == "127.0.0.1")
        #expect(components.port == 8080)
        #expect(components.path == "/proxy/v1/forecast")
        let query = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(query["latitude"] == "31.22222")
        #expect(query["longitude"] == "0")
        #expect(query["current"] == OpenMeteoEndpoints.currentVariables.joined(separator: ","))
        #expect(query["hourly"] == "temperature_2m,precipitation_probability,weather_code")
        #expect(query["daily"] == "weather_code,temperature_2m_max,temperature_2m_min")
        #expect(query["timezone"] == "auto")
        #expect(query["forecast_days"] == "7")
        #expect(query["wind_speed_unit"] == "ms")
    }

    @Test func forecast_withDefaults_usesForecastHost() {
        let url = OpenMeteoEndpoints().forecast(latitude: 47.36667, longitude: 8.55).url.absoluteString
        #expect(url.hasPrefix("https://api.open-meteo.com/v1/forecast?latitude=47.36667&longitude=8.55&current="))
    }
}
