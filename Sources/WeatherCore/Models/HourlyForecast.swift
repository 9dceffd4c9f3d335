/// One step of the hourly (Open-Meteo) or 3-hourly (OpenWeatherMap) forecast.
public struct HourlyForecast: Codable, Equatable, Sendable {
    /// Local start of the step (ISO 8601 with offset).
    public var time: String
    public var temperature: Double
    /// Chance of precipitation in percent, when the provider gives it.
    public var precipitationProbability: Int?
    public var weatherCode: Int
    public var weather: String

    enum CodingKeys: String, CodingKey {
        case time, temperature
        case precipitationProbability = "precipitation_probability"
        case weatherCode = "weather_code"
        case weather
    }

    public init(time: String, temperature: Double, precipitationProbability: Int?, weatherCode: Int, weather: String) {
        self.time = time
        self.temperature = temperature
        self.precipitationProbability = precipitationProbability
        self.weatherCode = weatherCode
        self.weather = weather
    }
}
