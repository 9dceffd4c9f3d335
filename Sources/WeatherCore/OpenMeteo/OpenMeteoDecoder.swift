import Foundation

/// Turns Open-Meteo answers into ``City`` and ``Forecast`` values, or a
/// ``WeatherUpstreamError``.
public enum OpenMeteoDecoder {
    /// How many hourly steps a forecast keeps: the next 48 hours.
    static let hourlyCount = 48
    /// How many days a forecast keeps.
    static let dailyCount = 7

    /// The cities of a `/v1/search` answer, in the geocoder's order.
    ///
    /// A response without `results` is no match (an empty array). Results without a country
    /// code or a time zone (seas, regions) are not cities and are left out.
    /// - Throws: The error the status or body stands for.
    public static func cities(from response: UpstreamResponse) throws(WeatherUpstreamError) -> [City] {
        try checkStatus(response)
        let decoded = try JSONBody.decode(OpenMeteoGeocodingResponse.self, from: response, provider: .openMeteo)
        return (decoded.results ?? []).compactMap { result in
            guard let country = result.countryCode, let timezone = result.timezone else { return nil }
            return City(
                id: result.id, name: result.name, country: country, admin1: result.admin1, lat: result.latitude,
                lon: result.longitude, timezone: timezone, population: result.population)
        }
    }

    /// The forecast in a `/v1/forecast` answer to ``OpenMeteoEndpoints/forecast(latitude:longitude:)``.
    ///
    /// Hourly steps start at the current local hour and run 48 hours; days start today and run
    /// 7. A step or a day whose value is `null` (past the model's range) is left out.
    /// - Parameters:
    ///   - response: The HTTP answer.
    ///   - cityID: The GeoNames id of the city asked for.
    ///   - fetchedAt: When the answer arrived.
    /// - Throws: The error the status or body stands for; ``WeatherUpstreamError/invalidResponse(_:detail:)``
    ///   when an array's length differs from its `time` array's or a time does not parse.
    public static func forecast(from response: UpstreamResponse, cityID: Int, fetchedAt: Date) throws(WeatherUpstreamError) -> Forecast {
        try checkStatus(response)
        let body = try JSONBody.decode(OpenMeteoForecastResponse.self, from: response, provider: .openMeteo)
        try checkLengths(body, excerpt: response.excerpt)

        guard LocalTime.offsetRange.contains(body.utcOffsetSeconds) else {
            throw .invalidResponse(.openMeteo, detail: "utc_offset_seconds \(body.utcOffsetSeconds) is beyond ±18 h")
        }
        let zone = body.timezone.flatMap(TimeZone.init(identifier:))
        let local = zone.map(LocalTime.init(timeZone:)) ?? LocalTime(offsetSeconds: body.utcOffsetSeconds)
        func timestamp(_ text: String) throws(WeatherUpstreamError) -> String {
            guard let instant = local.instant(ofLocal: text) else {
                throw .invalidResponse(.openMeteo, detail: "time '\(text)' is not a local ISO 8601 time")
            }
            return local.timestamp(instant)
        }

        let now = body.current
        let current = CurrentWeather(
            time: try timestamp(now.time), temperature: now.temperature2m, weatherCode: now.weatherCode,
            weather: WMOWeatherCode.text(for: now.weatherCode), apparentTemperature: now.apparentTemperature,
            humidity: now.relativeHumidity2m, windSpeed: now.windSpeed10m, windDirection: now.windDirection10m,
            pressure: now.pressureMsl, cloudCover: now.cloudCover)

        // Hourly times are local `yyyy-MM-ddTHH:mm`, so comparing the text up to the hour finds
        // the step the current time falls in.
        let currentHour = now.time.prefix(13)
        let hours = body.hourly
        let start = hours.time.firstIndex { $0.prefix(13) >= currentHour } ?? hours.time.endIndex
        var hourly: [HourlyForecast] = []
        for index in start..<min(start + hourlyCount, hours.time.count) {
            guard let temperature = hours.temperature2m[index], let code = hours.weatherCode[index] else { continue }
            let probability = hours.precipitationProbability?[index].map { Int(min(max($0, 0), 100).rounded()) }
            hourly.append(
                HourlyForecast(
                    time: try timestamp(hours.time[index]), temperature: temperature, precipitationProbability: probability,
                    weatherCode: code, weather: WMOWeatherCode.text(for: code)))
        }

        let days = body.daily
        var daily: [DailyForecast] = []
        for index in days.time.indices.prefix(dailyCount) {
            guard let low = days.temperature2mMin[index], let high = days.temperature2mMax[index], let code = days.weatherCode[index] else {
                continue
            }
            daily.append(DailyForecast(date: days.time[index], min: low, max: high, weatherCode: code, weather: WMOWeatherCode.text(for: code)))
        }

        return Forecast(
            cityID: cityID, current: current, hourly: hourly, hourlyIntervalSeconds: 3600, daily: daily, units: units(body),
            fetchedAt: LocalTime.utc.timestamp(fetchedAt), source: .openMeteo, stale: false)
    }

    /// Maps a non-2xx status to its error; 2xx passes.
    static func checkStatus(_ response: UpstreamResponse) throws(WeatherUpstreamError) {
        switch response.status {
        case 200..<300:
            return
        case 400:
            if let body = JSONBody.attempt(OpenMeteoErrorBody.self, from: response.body) { throw .badRequest(.openMeteo, reason: body.reason) }
            throw .badRequest(.openMeteo, reason: "HTTP 400: \(response.excerpt)")
        case 401, 403:
            throw .upstreamAuth(.openMeteo, message: "Open-Meteo refused access (HTTP \(response.status))")
        case 429:
            throw .rateLimited(.openMeteo, retryAfter: response.retryAfterSeconds)
        default:
            throw .server(.openMeteo, status: response.status)
        }
    }

    private static func checkLengths(_ body: OpenMeteoForecastResponse, excerpt: String) throws(WeatherUpstreamError) {
        let hourly = body.hourly
        var mismatches: [String] = []
        func check(_ name: String, _ count: Int?, against times: Int) {
            if let count, count != times { mismatches.append("\(name) has \(count) values for \(times) times") }
        }
        check("hourly.temperature_2m", hourly.temperature2m.count, against: hourly.time.count)
        check("hourly.weather_code", hourly.weatherCode.count, against: hourly.time.count)
        check("hourly.precipitation_probability", hourly.precipitationProbability?.count, against: hourly.time.count)
        let daily = body.daily
        check("daily.weather_code", daily.weatherCode.count, against: daily.time.count)
        check("daily.temperature_2m_max", daily.temperature2mMax.count, against: daily.time.count)
        check("daily.temperature_2m_min", daily.temperature2mMin.count, against: daily.time.count)
        if !mismatches.isEmpty {
            throw .invalidResponse(.openMeteo, detail: mismatches.joined(separator: "; "))
        }
    }

    /// The units the answer states; where it omits one, the API's documented default for what
    /// the request asked (°C, m/s as requested, %, hPa, °).
    private static func units(_ body: OpenMeteoForecastResponse) -> ForecastUnits {
        let current = body.currentUnits ?? [:]
        let hourly = body.hourlyUnits ?? [:]
        return ForecastUnits(
            temperature: current["temperature_2m"] ?? hourly["temperature_2m"] ?? "°C",
            windSpeed: current["wind_speed_10m"] ?? "m/s",
            windDirection: current["wind_direction_10m"] ?? "°",
            humidity: current["relative_humidity_2m"] ?? "%",
            pressure: current["pressure_msl"] ?? "hPa",
            cloudCover: current["cloud_cover"] ?? "%",
            precipitationProbability: hourly["precipitation_probability"] ?? "%",
            weatherCode: ForecastUnits.wmoCode)
    }
}
