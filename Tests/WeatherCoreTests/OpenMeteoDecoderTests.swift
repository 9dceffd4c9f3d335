import Foundation
import Testing

@testable import WeatherCore

struct OpenMeteoDecoderTests {
    // MARK: geocoding

    @Test func cities_whenResultsPresent_mapsCitiesAndDropsNonCities() throws {
        let cities = try OpenMeteoDecoder.cities(from: Fixture.response("open-meteo-geocoding"))
        #expect(cities.map(\.id) == [1_796_236, 1_529_102])
        #expect(
            cities[0]
                == City(
                    id: 1_796_236, name: "Shanghai", country: "CN", admin1: "Shanghai", lat: 31.22222, lon: 121.45806, timezone: "Asia/Shanghai",
                    population: 24_874_500))
        #expect(cities[1].population == nil)
    }

    @Test func cities_whenResultsAbsent_returnsEmpty() throws {
        let cities = try OpenMeteoDecoder.cities(from: Fixture.response(status: 200, #"{"generationtime_ms":0.5}"#))
        #expect(cities.isEmpty)
    }

    @Test func cities_whenBodyIsNotJSON_throwsInvalidResponseWithExcerpt() {
        #expect(throws: WeatherUpstreamError.invalidResponse(.openMeteo, detail: "not JSON in <html>gateway</html>")) {
            try OpenMeteoDecoder.cities(from: Fixture.response(status: 200, "<html>gateway</html>"))
        }
    }

    @Test func cities_whenCountRejected_throwsBadRequestWithReason() {
        let body = #"{"error":true,"reason":"Parameter count must be between 1 and 100."}"#
        #expect(throws: WeatherUpstreamError.badRequest(.openMeteo, reason: "Parameter count must be between 1 and 100.")) {
            try OpenMeteoDecoder.cities(from: Fixture.response(status: 400, body))
        }
    }

    // MARK: forecast

    @Test func forecast_withDocumentedShape_normalisesCurrent() throws {
        let forecast = try OpenMeteoDecoder.forecast(from: Fixture.response("open-meteo-forecast"), cityID: 1_796_236, fetchedAt: Fixture.fetchedAt)
        #expect(forecast.cityID == 1_796_236)
        #expect(forecast.source == .openMeteo)
        #expect(forecast.stale == false)
        #expect(forecast.fetchedAt == "2025-01-01T04:20:00Z")
        #expect(
            forecast.current
                == CurrentWeather(
                    time: "2025-01-01T12:15:00+08:00", temperature: 8.4, weatherCode: 3, weather: "Overcast", apparentTemperature: 6.9, humidity: 63,
                    windSpeed: 4.1, windDirection: 90, pressure: 1021.3, cloudCover: 100))
        #expect(forecast.units.temperature == "°C")
        #expect(forecast.units.windSpeed == "m/s")
        #expect(forecast.units.weatherCode == "wmo code")
    }

    @Test func forecast_hourly_startsAtCurrentHourAndHolds48() throws {
        let forecast = try OpenMeteoDecoder.forecast(from: Fixture.response("open-meteo-forecast"), cityID: 1, fetchedAt: Fixture.fetchedAt)
        #expect(forecast.hourlyIntervalSeconds == 3600)
        #expect(forecast.hourly.count == 48)
        #expect(
            forecast.hourly.first
                == HourlyForecast(
                    time: "2025-01-01T12:00:00+08:00", temperature: 11.0, precipitationProbability: 60, weatherCode: 0, weather: "Clear sky"))
        #expect(forecast.hourly.last?.time == "2025-01-03T11:00:00+08:00")
        #expect(forecast.hourly[1].weather == "Mainly clear")
    }

    @Test func forecast_daily_holdsSevenDays() throws {
        let forecast = try OpenMeteoDecoder.forecast(from: Fixture.response("open-meteo-forecast"), cityID: 1, fetchedAt: Fixture.fetchedAt)
        #expect(forecast.daily.count == 7)
        #expect(forecast.daily[1] == DailyForecast(date: "2025-01-02", min: 3.0, max: 7.1, weatherCode: 61, weather: "Slight rain"))
        #expect(forecast.daily[6].weather == "Thunderstorm")
    }

    @Test func forecast_whenValuesAreNull_leavesThoseStepsOut() throws {
        let response = try Fixture.modified("open-meteo-forecast") { object in
            var hourly = object["hourly"] as? [String: Any] ?? [:]
            var temperatures = hourly["temperature_2m"] as? [Any] ?? []
            temperatures[13] = NSNull()
            hourly["temperature_2m"] = temperatures
            var probabilities = hourly["precipitation_probability"] as? [Any] ?? []
            probabilities[12] = NSNull()
            hourly["precipitation_probability"] = probabilities
            object["hourly"] = hourly
        }
        let forecast = try OpenMeteoDecoder.forecast(from: response, cityID: 1, fetchedAt: Fixture.fetchedAt)
        #expect(forecast.hourly.count == 47)
        #expect(forecast.hourly[0].precipitationProbability == nil)
        #expect(forecast.hourly[1].time == "2025-01-01T14:00:00+08:00")
    }

    @Test func forecast_whenHourlyArrayShorterThanTime_throwsInvalidResponse() throws {
        let response = try Fixture.modified("open-meteo-forecast") { object in
            var hourly = object["hourly"] as? [String: Any] ?? [:]
            hourly["weather_code"] = (hourly["weather_code"] as? [Any] ?? []).dropLast().map { $0 }
            object["hourly"] = hourly
        }
        #expect(throws: WeatherUpstreamError.invalidResponse(.openMeteo, detail: "hourly.weather_code has 167 values for 168 times")) {
            try OpenMeteoDecoder.forecast(from: response, cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    @Test func forecast_whenDailyArrayLongerThanTime_throwsInvalidResponse() throws {
        let response = try Fixture.modified("open-meteo-forecast") { object in
            var daily = object["daily"] as? [String: Any] ?? [:]
            daily["temperature_2m_min"] = (daily["temperature_2m_min"] as? [Any] ?? []) + [1.0]
            object["daily"] = daily
        }
        #expect(throws: WeatherUpstreamError.invalidResponse(.openMeteo, detail: "daily.temperature_2m_min has 8 values for 7 times")) {
            try OpenMeteoDecoder.forecast(from: response, cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    @Test func forecast_whenSectionMissing_throwsInvalidResponseNamingIt() throws {
        let response = try Fixture.modified("open-meteo-forecast") { $0["daily"] = nil }
        do {
            _ = try OpenMeteoDecoder.forecast(from: response, cityID: 1, fetchedAt: Fixture.fetchedAt)
            Issue.record("decoded a forecast without `daily`")
        } catch {
            #expect(error.code == "invalid_response")
            #expect(error.description.hasPrefix("Open-Meteo sent an invalid response: missing daily in {"))
        }
    }

    @Test func forecast_whenBodyIsTruncatedJSON_throwsInvalidResponse() throws {
        let body = try Fixture.data("open-meteo-forecast").prefix(300)
        do {
            _ = try OpenMeteoDecoder.forecast(from: UpstreamResponse(status: 200, body: body), cityID: 1, fetchedAt: Fixture.fetchedAt)
            Issue.record("decoded a truncated body")
        } catch {
            #expect(error.code == "invalid_response")
            #expect(error.status == 502)
        }
    }

    @Test func forecast_whenVariableRejected_throwsBadRequestWithReason() {
        let reason = "Cannot initialize WeatherVariable from invalid String value tempeture_2m for key hourly"
        #expect(throws: WeatherUpstreamError.badRequest(.openMeteo, reason: reason)) {
            try OpenMeteoDecoder.forecast(
                from: Fixture.response(status: 400, #"{"error":true,"reason":"\#(reason)"}"#), cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    @Test func forecast_when400BodyIsNotTheErrorShape_throwsBadRequestWithExcerpt() {
        #expect(throws: WeatherUpstreamError.badRequest(.openMeteo, reason: "HTTP 400: Bad Request")) {
            try OpenMeteoDecoder.forecast(from: Fixture.response(status: 400, "Bad Request"), cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    @Test func forecast_when429WithRetryAfter_throwsRateLimited() {
        let response = Fixture.response(status: 429, #"{"error":true,"reason":"Daily API request limit exceeded"}"#, headers: ["Retry-After": "120"])
        #expect(throws: WeatherUpstreamError.rateLimited(.openMeteo, retryAfter: 120)) {
            try OpenMeteoDecoder.forecast(from: response, cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    @Test func forecast_when429WithoutRetryAfter_throwsRateLimitedWithoutDelay() {
        #expect(throws: WeatherUpstreamError.rateLimited(.openMeteo, retryAfter: nil)) {
            try OpenMeteoDecoder.forecast(from: Fixture.response(status: 429, "Too Many Requests"), cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    @Test(arguments: [500, 502, 503, 504])
    func forecast_when5xx_throwsServer(status: Int) {
        #expect(throws: WeatherUpstreamError.server(.openMeteo, status: status)) {
            try OpenMeteoDecoder.forecast(from: Fixture.response(status: status, "<html>oops</html>"), cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    // Regression (corpus Tests/FuzzCorpus/open-meteo/regression-offset-int-min): an offset of
    // Int.min trapped in the timestamp arithmetic.
    @Test func forecast_whenUTCOffsetBeyond18Hours_throwsInvalidResponse() throws {
        let response = try Fixture.modified("open-meteo-forecast") { object in
            object["timezone"] = nil
            object["utc_offset_seconds"] = Int.min
        }
        #expect(throws: WeatherUpstreamError.invalidResponse(.openMeteo, detail: "utc_offset_seconds \(Int.min) is beyond ±18 h")) {
            try OpenMeteoDecoder.forecast(from: response, cityID: 1, fetchedAt: Fixture.fetchedAt)
        }
    }

    @Test func forecast_whenPrecipitationProbabilityOutOfRange_clampsToPercent() throws {
        let response = try Fixture.modified("open-meteo-forecast") { object in
            var hourly = object["hourly"] as? [String: Any] ?? [:]
            var probabilities = hourly["precipitation_probability"] as? [Any] ?? []
            probabilities[12] = 1e300
            probabilities[13] = -5.0
            hourly["precipitation_probability"] = probabilities
            object["hourly"] = hourly
        }
        let forecast = try OpenMeteoDecoder.forecast(from: response, cityID: 1, fetchedAt: Fixture.fetchedAt)
        #expect(forecast.hourly[0].precipitationProbability == 100)
        #expect(forecast.hourly[1].precipitationProbability == 0)
    }
}
