/// One local day of the forecast.
public struct DailyForecast: Codable, Equatable, Sendable {
    /// The local calendar date (`2025-01-01`).
    public var date: String
    public var min: Double
    public var max: Double
    public var weatherCode: Int
    public var weather: String

    enum CodingKeys: String, CodingKey {
        case date, min, max
        case weatherCode = "weather_code"
        case weather
    }

    public init(date: String, min: Double, max: Double, weatherCode: Int, weather: String) {
        self.date = date
        self.min = min
        self.max = max
        self.weatherCode = weatherCode
        self.weather = weather
    }
}
