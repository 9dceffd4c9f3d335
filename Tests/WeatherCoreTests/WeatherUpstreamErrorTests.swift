import Foundation
import Testing

@testable import WeatherCore

struct WeatherUpstreamErrorTests {
    @Test(arguments: [
        (WeatherUpstreamError.unreachable(.openMeteo, detail: "connection refused"), 503, "upstream_unreachable"),
        (.timeout(.openMeteo), 504, "timeout"),
        (.rateLimited(.openWeatherMap, retryAfter: 5), 503, "rate_limited"),
        (.upstreamAuth(.openWeatherMap, message: "OpenWeatherMap rejected the API key"), 502, "upstream_auth"),
        (.notFound(.openWeatherMap, message: "city not found"), 404, "not_found"),
        (.badRequest(.openMeteo, reason: "bad"), 400, "bad_request"),
        (.server(.openMeteo, status: 500), 502, "upstream_error"),
        (.invalidResponse(.openMeteo, detail: "not JSON"), 502, "invalid_response"),
    ])
    func statusAndCode_matchTheBusContract(error: WeatherUpstreamError, status: Int, code: String) {
        #expect(error.status == status)
        #expect(error.code == code)
    }

    @Test func description_namesProviderAndAction() {
        #expect(
            WeatherUpstreamError.rateLimited(.openMeteo, retryAfter: 30).description == "Open-Meteo is rate limiting this service: retry after 30 s")
        #expect(WeatherUpstreamError.server(.openWeatherMap, status: 503).description == "OpenWeatherMap answered HTTP 503")
        #expect(WeatherUpstreamError.timeout(.openMeteo).description == "Open-Meteo did not answer in time")
        #expect(
            WeatherUpstreamError.upstreamAuth(.openWeatherMap, message: OpenWeatherMapDecoder.rejectedKeyMessage).description
                == "OpenWeatherMap rejected the API key")
    }

    @Test func unreachable_fromRequest_redactsKeyInURLAndReason() {
        let request = OpenWeatherMapEndpoints(apiKey: OpenWeatherMapAPIKey("abc123")).forecast(latitude: 1, longitude: 2)
        let error = WeatherUpstreamError.unreachable(request, reason: "could not connect to https://api.openweathermap.org/?appid=abc123")
        #expect(error.code == "upstream_unreachable")
        #expect(!error.description.contains("abc123"))
        #expect(!String(describing: error).contains("abc123"))
        #expect(
            error.description.hasPrefix(
                "OpenWeatherMap is unreachable: https://api.openweathermap.org/data/2.5/forecast?lat=1&lon=2&units=metric&appid=REDACTED: "))
    }

    @Test func description_whenDetailCarriesKey_redactsIt() {
        let error = WeatherUpstreamError.invalidResponse(.openWeatherMap, detail: "GET /x?APPID=abc123")
        #expect(error.description == "OpenWeatherMap sent an invalid response: GET /x?APPID=REDACTED")
    }

    @Test func isTransient_separatesRetryableFromConfiguration() {
        #expect(WeatherUpstreamError.timeout(.openMeteo).isTransient)
        #expect(WeatherUpstreamError.server(.openMeteo, status: 503).isTransient)
        #expect(!WeatherUpstreamError.upstreamAuth(.openWeatherMap, message: "x").isTransient)
        #expect(!WeatherUpstreamError.badRequest(.openMeteo, reason: "x").isTransient)
    }
}
