import Foundation
import Testing

@testable import WeatherCore

struct OpenWeatherMapEndpointsTests {
    let endpoints = OpenWeatherMapEndpoints(apiKey: OpenWeatherMapAPIKey("k3y-s3cret"))

    @Test func search_withDefaults_buildsGeocoderURL() {
        let request = endpoints.search(query: "London,GB", limit: 5)
        #expect(request.url.absoluteString == "https://api.openweathermap.org/geo/1.0/direct?q=London,GB&limit=5&appid=k3y-s3cret")
    }

    @Test func search_whenLimitOverFive_clampsToFive() {
        #expect(endpoints.search(query: "x", limit: 50).url.query == "q=x&limit=5&appid=k3y-s3cret")
        #expect(endpoints.search(query: "x", limit: -1).url.query == "q=x&limit=1&appid=k3y-s3cret")
    }

    @Test func currentWeatherAndForecast_useMetricUnitsAndCoordinates() throws {
        let base = try #require(URL(string: "http://127.0.0.1:9000"))
        let local = OpenWeatherMapEndpoints(baseURL: base, apiKey: OpenWeatherMapAPIKey("K"))
        #expect(
            local.currentWeather(latitude: 44.34, longitude: 10.99).url.absoluteString
                == "http://127.0.0.1:9000/data/2.5/weather?lat=44.34&lon=10.99&units=metric&appid=K")
        #expect(
            local.forecast(latitude: -33.86785, longitude: 151.20732).url.absoluteString
                == "http://127.0.0.1:9000/data/2.5/forecast?lat=-33.86785&lon=151.20732&units=metric&appid=K")
    }

    @Test func request_description_redactsTheKey() {
        let text = endpoints.currentWeather(latitude: 1, longitude: 2).description
        #expect(text == "GET https://api.openweathermap.org/data/2.5/weather?lat=1&lon=2&units=metric&appid=REDACTED")
        #expect(!text.contains("k3y-s3cret"))
    }

    @Test func apiKey_whenInterpolated_printsRedacted() {
        let key = OpenWeatherMapAPIKey("k3y-s3cret")
        #expect("\(key)" == "REDACTED")
        #expect(String(reflecting: key) == "REDACTED")
        #expect(!"\(endpoints)".contains("k3y-s3cret"))
    }
}
