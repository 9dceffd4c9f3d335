import Foundation
import Testing

@testable import WeatherCore

struct OpenWeatherMapDecoderTests {
    func decodeFixtures() throws -> Forecast {
        try OpenWeatherMapDecoder.forecast(
            current: Fixture.response("openweathermap-current"), forecast: Fixture.response("openweathermap-forecast"), cityID: 3_163_858,
            fetchedAt: Fixture.fetchedAt)
    }

    @Test func forecast_withDocumentedShapes_normalisesCurrent() throws {
        let forecast = try decodeFixtures()
        #expect(forecast.source == .openWeatherMap)
        #expect(forecast.cityID == 3_163_858)
        #expect(forecast.stale == false)
        #expect(
            forecast.current
                == CurrentWeather(
                    time: "2022-08-30T16:43:12+02:00", temperature: 22.05, weatherCode: 501, weather: "Moderate rain", apparentTemperature: 22.15,
                    humidity: 72, windSpeed: 0.62, windDirection: 349, pressure: 1015, cloudCover: 100))
        #expect(forecast.units.weatherCode == "owm condition id")
        #expect(forecast.units.temperature == "°C")
    }

    @Test func forecast_hourly_holdsThe3HourStepsOfTheNext48Hours() throws {
        let forecast = try decodeFixtures()
        #expect(forecast.hourlyIntervalSeconds == 10800)
        #expect(forecast.hourly.count == 16)
        #expect(
            forecast.hourly[0]
                == HourlyForecast(
                    time: "2022-08-30T17:00:00+02:00", temperature: 15, precipitationProbability: 0, weatherCode: 800, weather: "Clear sky"))
        #expect(forecast.hourly[3].precipitationProbability == 30)
        #expect(forecast.hourly[15].time == "2022-09-01T14:00:00+02:00")
    }

    @Test func forecast_daily_aggregatesPerLocalDay() throws {
        let forecast = try decodeFixtures()
        #expect(forecast.daily.map(\.date) == ["2022-08-30", "2022-08-31", "2022-09-01", "2022-09-02", "2022-09-03", "2022-09-04"])
        #expect(forecast.daily[0] == DailyForecast(date: "2022-08-30", min: 15, max: 18, weatherCode: 800, weather: "Clear sky"))
        // 31 Aug: local 02:00...23:00; the step at 11:00 is nearest noon.
        #expect(forecast.daily[1] == DailyForecast(date: "2022-08-31", min: 15, max: 25.5, weatherCode: 801, weather: "Few clouds"))
    }

    @Test func forecast_whenOffsetIsNegative_groupsDaysAtThatOffset() throws {
        let forecast = try Fixture.modified("openweathermap-forecast") { object in
            var city = object["city"] as? [String: Any] ?? [:]
            city["timezone"] = -18000
            object["city"] = city
        }
        let decoded = try OpenWeatherMapDecoder.forecast(
            current: Fixture.response("openweathermap-current"), forecast: forecast, cityID: 1, fetchedAt: Fixture.fetchedAt)
        #expect(decoded.hourly[0].time == "2022-08-30T10:00:00-05:00")
        // Local 10:00...22:00 of 30 Aug.
        #expect(decoded.daily[0].date == "2022-08-30")
        #expect(decoded.daily[0].min == 15)
        #expect(decoded.daily[0].max == 21)
    }

    @Test func forecast_whenConditionMissing_throwsInvalidResponse() throws {
        let current = try Fixture.modified("openweathermap-current") { $0["weather"] = [Any]() }
        let forecast = try Fixture.response("openweathermap-forecast")
        do {
            _ = try OpenWeatherMapDecoder.forecast(current: current, forecast: forecast, cityID: 1, fetchedAt: Fixture.fetchedAt)
            Issue.record("decoded current weather without a condition")
        } catch {
            #expect(error.code == "invalid_response")
            #expect(error.description.contains("has no condition"))
        }
    }

    @Test func forecast_whenBodyIsNotJSON_throwsInvalidResponse() throws {
        #expect(throws: WeatherUpstreamError.invalidResponse(.openWeatherMap, detail: "not JSON in <html>502 Bad Gateway</html>")) {
            try OpenWeatherMapDecoder.forecast(
                current: Fixture.response(status: 200, "<html>502 Bad Gateway</html>"), forecast: Fixture.response("openweathermap-forecast"),
                cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    // MARK: errors: `cod` as a number or a string

    @Test func checkStatus_when401WithNumericCod_throwsUpstreamAuth() {
        let body = #"{"cod":401,"message":"Invalid API key. Please see https://openweathermap.org/faq#error401 for more info."}"#
        #expect(throws: WeatherUpstreamError.upstreamAuth(.openWeatherMap, message: "OpenWeatherMap rejected the API key")) {
            try OpenWeatherMapDecoder.places(from: Fixture.response(status: 401, body))
        }
    }

    @Test func checkStatus_when404WithStringCod_throwsNotFoundWithMessage() {
        #expect(throws: WeatherUpstreamError.notFound(.openWeatherMap, message: "city not found")) {
            try OpenWeatherMapDecoder.places(from: Fixture.response(status: 404, #"{"cod":"404","message":"city not found"}"#))
        }
    }

    @Test func checkStatus_when200CarriesStringErrorCod_throwsByTheCod() {
        #expect(throws: WeatherUpstreamError.notFound(.openWeatherMap, message: "city not found")) {
            try OpenWeatherMapDecoder.places(from: Fixture.response(status: 200, #"{"cod":"404","message":"city not found"}"#))
        }
    }

    @Test func checkStatus_when200CarriesNumericErrorCod_throwsByTheCod() {
        #expect(throws: WeatherUpstreamError.upstreamAuth(.openWeatherMap, message: "OpenWeatherMap rejected the API key")) {
            try OpenWeatherMapDecoder.places(from: Fixture.response(status: 200, #"{"cod":401,"message":"Invalid API key."}"#))
        }
    }

    @Test func checkStatus_when429_throwsRateLimitedWithRetryAfterHeader() {
        let body = #"{"cod":429,"message":"Your account is temporary blocked due to exceeding of requests limitation of your subscription type."}"#
        #expect(throws: WeatherUpstreamError.rateLimited(.openWeatherMap, retryAfter: 60)) {
            try OpenWeatherMapDecoder.places(from: Fixture.response(status: 429, body, headers: ["retry-after": "60"]))
        }
        #expect(throws: WeatherUpstreamError.rateLimited(.openWeatherMap, retryAfter: nil)) {
            try OpenWeatherMapDecoder.places(from: Fixture.response(status: 429, body))
        }
    }

    @Test func checkStatus_when400_throwsBadRequestWithMessage() {
        #expect(throws: WeatherUpstreamError.badRequest(.openWeatherMap, reason: "wrong latitude")) {
            try OpenWeatherMapDecoder.places(from: Fixture.response(status: 400, #"{"cod":"400","message":"wrong latitude"}"#))
        }
    }

    @Test func checkStatus_when503WithoutBody_throwsServer() {
        #expect(throws: WeatherUpstreamError.server(.openWeatherMap, status: 503)) {
            try OpenWeatherMapDecoder.places(from: Fixture.response(status: 503, ""))
        }
    }

    @Test func checkStatus_whenSuccessCodIsString200_passes() throws {
        // The forecast endpoint sends `"cod":"200"`, the weather endpoint `"cod":200`.
        try OpenWeatherMapDecoder.checkStatus(Fixture.response("openweathermap-forecast"))
        try OpenWeatherMapDecoder.checkStatus(Fixture.response("openweathermap-current"))
    }

    @Test func invalidResponse_whenBodyEchoesTheKey_redactsIt() {
        let response = Fixture.response(status: 200, "upstream proxy error for /data/2.5/weather?lat=1&appid=k3y-s3cret&units=metric")
        do {
            _ = try OpenWeatherMapDecoder.places(from: response)
            Issue.record("decoded a non-JSON body")
        } catch {
            #expect(!error.description.contains("k3y-s3cret"))
            #expect(error.description.contains("appid=REDACTED&units"))
        }
    }

    // MARK: geocoder

    @Test func places_decodesGeocoderResults() throws {
        let places = try OpenWeatherMapDecoder.places(from: Fixture.response("openweathermap-geo"))
        #expect(places.count == 5)
        #expect(
            places[0]
                == OpenWeatherMapPlace(
                    name: "London", localNames: ["en": "London", "de": "London", "fr": "Londres"], lat: 51.5073219, lon: -0.1276474, country: "GB",
                    state: "England"))
    }

    @Test func places_whenNoMatch_returnsEmpty() throws {
        #expect(try OpenWeatherMapDecoder.places(from: Fixture.response(status: 200, "[]")).isEmpty)
    }

    // Regression (corpus Tests/FuzzCorpus/openweathermap/regression-timezone-int-min): a
    // `timezone` of Int.min trapped in the timestamp arithmetic.
    @Test func forecast_whenTimezoneBeyond18Hours_throwsInvalidResponse() throws {
        let forecast = try Fixture.modified("openweathermap-forecast") { object in
            var city = object["city"] as? [String: Any] ?? [:]
            city["timezone"] = Int.min
            object["city"] = city
        }
        #expect(throws: WeatherUpstreamError.invalidResponse(.openWeatherMap, detail: "UTC offset (`timezone`) \(Int.min) s is beyond ±18 h")) {
            try OpenWeatherMapDecoder.forecast(
                current: Fixture.response("openweathermap-current"), forecast: forecast, cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    @Test func forecast_whenDtIsNotAUnixTime_throwsInvalidResponse() throws {
        let current = try Fixture.modified("openweathermap-current") { $0["dt"] = Int.max }
        #expect(
            throws: WeatherUpstreamError.invalidResponse(.openWeatherMap, detail: "time (`dt`) \(Int.max) is not a Unix time between 1970 and 9999")
        ) {
            try OpenWeatherMapDecoder.forecast(
                current: current, forecast: Fixture.response("openweathermap-forecast"), cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    @Test func forecast_whenPopOutOfRange_clampsToPercent() throws {
        let forecast = try Fixture.modified("openweathermap-forecast") { object in
            var list = object["list"] as? [[String: Any]] ?? []
            list[0]["pop"] = 1e300
            list[1]["pop"] = -0.5
            object["list"] = list
        }
        let decoded = try OpenWeatherMapDecoder.forecast(
            current: Fixture.response("openweathermap-current"), forecast: forecast, cityID: 1, fetchedAt: Fixture.fetchedAt)
        #expect(decoded.hourly[0].precipitationProbability == 100)
        #expect(decoded.hourly[1].precipitationProbability == 0)
    }
}
