import Foundation

/// Turns OpenWeatherMap answers into the same ``Forecast`` shape as Open-Meteo's, or a
/// ``WeatherUpstreamError``.
///
/// The free forecast is 3-hourly: ``Forecast/hourly`` holds 16 steps of 3 hours (the next 48
/// hours) and the days are aggregated from those steps, per local day at the offset
/// OpenWeatherMap gives for the place.
public enum OpenWeatherMapDecoder {
    /// The message for a rejected key: the key itself never appears in it.
    public static let rejectedKeyMessage = "OpenWeatherMap rejected the API key"
    static let stepSeconds = 3 * 3600
    static let hourlyWindowSeconds = 48 * 3600
    static let dailyCount = 7

    /// The places of a `geo/1.0/direct` answer, in the geocoder's order (empty: no match).
    /// ``CityTable/match(_:)`` maps them to GeoNames cities.
    /// - Throws: The error the status or body stands for.
    public static func places(from response: UpstreamResponse) throws(WeatherUpstreamError) -> [OpenWeatherMapPlace] {
        try checkStatus(response)
        return try JSONBody.decode([OpenWeatherMapPlace].self, from: response, provider: .openWeatherMap)
    }

    /// The forecast from the `data/2.5/weather` and `data/2.5/forecast` answers for one place.
    ///
    /// Daily minimum and maximum are the lowest and highest of that local day's 3-hourly
    /// temperatures, and its condition is the step nearest local noon: OpenWeatherMap's free plan
    /// has no daily forecast. The first and the last day cover only the hours in the window.
    /// - Parameters:
    ///   - current: The `data/2.5/weather` answer.
    ///   - forecast: The `data/2.5/forecast` answer.
    ///   - cityID: The GeoNames id of the city asked for.
    ///   - fetchedAt: When the answers arrived.
    /// - Throws: The error either status or body stands for.
    public static func forecast(
        current: UpstreamResponse, forecast: UpstreamResponse, cityID: Int, fetchedAt: Date
    ) throws(WeatherUpstreamError)
        -> Forecast
    {
        try checkStatus(current)
        try checkStatus(forecast)
        let now = try JSONBody.decode(OpenWeatherMapCurrentResponse.self, from: current, provider: .openWeatherMap)
        let steps = try JSONBody.decode(OpenWeatherMapForecastResponse.self, from: forecast, provider: .openWeatherMap)
        guard let offset = steps.city?.timezone ?? now.timezone else {
            throw .invalidResponse(.openWeatherMap, detail: "no UTC offset (`timezone`) in either answer: \(forecast.excerpt)")
        }
        guard LocalTime.offsetRange.contains(offset) else {
            throw .invalidResponse(.openWeatherMap, detail: "UTC offset (`timezone`) \(offset) s is beyond ±18 h")
        }
        if let bad = ([now.dt] + steps.list.map(\.dt)).first(where: { !unixTimeRange.contains($0) }) {
            throw .invalidResponse(.openWeatherMap, detail: "time (`dt`) \(bad) is not a Unix time between 1970 and 9999")
        }
        guard let condition = now.weather.first else {
            throw .invalidResponse(.openWeatherMap, detail: "the current weather has no condition: \(current.excerpt)")
        }
        if let index = steps.list.firstIndex(where: { $0.weather.isEmpty }) {
            throw .invalidResponse(.openWeatherMap, detail: "forecast step \(index) has no condition: \(forecast.excerpt)")
        }
        let local = LocalTime(offsetSeconds: offset)

        let currentWeather = CurrentWeather(
            time: local.timestamp(date(now.dt)), temperature: now.main.temp, weatherCode: condition.id, weather: condition.text,
            apparentTemperature: now.main.feelsLike, humidity: now.main.humidity, windSpeed: now.wind?.speed,
            windDirection: now.wind?.deg, pressure: now.main.pressure, cloudCover: now.clouds?.all)

        let entries = steps.list.sorted { $0.dt < $1.dt }
        let windowEnd = (entries.first?.dt ?? 0) + hourlyWindowSeconds
        let hourly = entries.prefix { $0.dt < windowEnd }.map { entry in
            HourlyForecast(
                time: local.timestamp(date(entry.dt)), temperature: entry.main.temp,
                precipitationProbability: entry.pop.map(percent), weatherCode: entry.weather[0].id,
                weather: entry.weather[0].text)
        }

        return Forecast(
            cityID: cityID, current: currentWeather, hourly: Array(hourly), hourlyIntervalSeconds: stepSeconds,
            daily: days(entries, local: local), units: units, fetchedAt: LocalTime.utc.timestamp(fetchedAt), source: .openWeatherMap,
            stale: false)
    }

    /// Maps a failed status, or a 200 whose body carries an error `cod`, to its error.
    static func checkStatus(_ response: UpstreamResponse) throws(WeatherUpstreamError) {
        let body = JSONBody.attempt(OpenWeatherMapErrorBody.self, from: response.body)
        if (200..<300).contains(response.status) {
            // Some endpoints answer 200 with the error in `cod`; a success carries 200 there.
            guard let code = body?.cod.value, !(200..<300).contains(code) else { return }
            throw error(code: code, message: body?.message, response: response)
        }
        throw error(code: response.status, message: body?.message, response: response)
    }

    private static func error(code: Int, message: String?, response: UpstreamResponse) -> WeatherUpstreamError {
        switch code {
        case 400: return .badRequest(.openWeatherMap, reason: message ?? "HTTP 400: \(response.excerpt)")
        case 401, 403: return .upstreamAuth(.openWeatherMap, message: rejectedKeyMessage)
        case 404: return .notFound(.openWeatherMap, message: message ?? "not found")
        case 429: return .rateLimited(.openWeatherMap, retryAfter: response.retryAfterSeconds)
        default: return .server(.openWeatherMap, status: code)
        }
    }

    private static func days(_ entries: [OpenWeatherMapForecastResponse.Entry], local: LocalTime) -> [DailyForecast] {
        var order: [String] = []
        var byDay: [String: [OpenWeatherMapForecastResponse.Entry]] = [:]
        for entry in entries {
            let day = local.date(date(entry.dt))
            if byDay[day] == nil { order.append(day) }
            byDay[day, default: []].append(entry)
        }
        return order.prefix(dailyCount).map { day in
            let steps = byDay[day]!
            let temperatures = steps.map(\.main.temp)
            let noon = steps.min { abs(local.hour(date($0.dt)) - 12) < abs(local.hour(date($1.dt)) - 12) }!
            return DailyForecast(
                date: day, min: temperatures.min()!, max: temperatures.max()!, weatherCode: noon.weather[0].id, weather: noon.weather[0].text)
        }
    }

    /// What `units=metric` gives.
    private static let units = ForecastUnits(
        temperature: "°C", windSpeed: "m/s", windDirection: "°", humidity: "%", pressure: "hPa", cloudCover: "%",
        precipitationProbability: "%", weatherCode: ForecastUnits.openWeatherMapCode)

    /// The `dt` values accepted: from 1970 through 9999 (what the time arithmetic here and the
    /// ISO 8601 timestamps hold).
    static let unixTimeRange = 0...253_402_300_799

    /// A probability (`pop`, 0...1) in whole percent; an out-of-range value is clamped to 0...100.
    static func percent(_ probability: Double) -> Int {
        Int((min(max(probability, 0), 1) * 100).rounded())
    }

    private static func date(_ unix: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(unix))
    }
}
