/// The units of a ``Forecast``'s numbers, as the provider stated them (Open-Meteo's `*_units`)
/// or as its request fixed them (OpenWeatherMap's `units=metric`).
public struct ForecastUnits: Codable, Equatable, Sendable {
    /// `°C`.
    public var temperature: String
    /// `m/s`: both requests ask for metres per second.
    public var windSpeed: String
    /// `°`.
    public var windDirection: String
    /// `%`.
    public var humidity: String
    /// `hPa`.
    public var pressure: String
    /// `%`.
    public var cloudCover: String
    /// `%`.
    public var precipitationProbability: String
    /// The code scheme of every `weather_code`: ``wmoCode`` or ``openWeatherMapCode``.
    public var weatherCode: String

    /// Open-Meteo's name for WMO weather interpretation codes.
    public static let wmoCode = "wmo code"
    /// OpenWeatherMap's own condition ids (2xx thunderstorm ... 8xx clouds).
    public static let openWeatherMapCode = "owm condition id"

    enum CodingKeys: String, CodingKey {
        case temperature
        case windSpeed = "wind_speed"
        case windDirection = "wind_direction"
        case humidity, pressure
        case cloudCover = "cloud_cover"
        case precipitationProbability = "precipitation_probability"
        case weatherCode = "weather_code"
    }

    public init(
        temperature: String, windSpeed: String, windDirection: String, humidity: String, pressure: String, cloudCover: String,
        precipitationProbability: String, weatherCode: String
    ) {
        self.temperature = temperature
        self.windSpeed = windSpeed
        self.windDirection = windDirection
        self.humidity = humidity
        self.pressure = pressure
        self.cloudCover = cloudCover
        self.precipitationProbability = precipitationProbability
        self.weatherCode = weatherCode
    }
}
