/// The conditions now. Every measurement both providers give is here; the optional ones are
/// absent when the provider's answer lacks them.
public struct CurrentWeather: Codable, Equatable, Sendable {
    /// Local time of the observation or model step (ISO 8601 with offset).
    public var time: String
    public var temperature: Double
    /// The provider's condition code: a WMO code (Open-Meteo) or an OpenWeatherMap condition id;
    /// ``ForecastUnits/weatherCode`` says which.
    public var weatherCode: Int
    /// The condition in words (`Partly cloudy`).
    public var weather: String
    public var apparentTemperature: Double?
    /// Relative humidity in percent.
    public var humidity: Double?
    public var windSpeed: Double?
    /// Where the wind comes from, degrees clockwise from north.
    public var windDirection: Double?
    /// Sea-level pressure.
    public var pressure: Double?
    /// Cloud cover in percent.
    public var cloudCover: Double?

    enum CodingKeys: String, CodingKey {
        case time, temperature
        case weatherCode = "weather_code"
        case weather
        case apparentTemperature = "apparent_temperature"
        case humidity
        case windSpeed = "wind_speed"
        case windDirection = "wind_direction"
        case pressure
        case cloudCover = "cloud_cover"
    }

    public init(
        time: String, temperature: Double, weatherCode: Int, weather: String, apparentTemperature: Double? = nil,
        humidity: Double? = nil, windSpeed: Double? = nil, windDirection: Double? = nil, pressure: Double? = nil,
        cloudCover: Double? = nil
    ) {
        self.time = time
        self.temperature = temperature
        self.weatherCode = weatherCode
        self.weather = weather
        self.apparentTemperature = apparentTemperature
        self.humidity = humidity
        self.windSpeed = windSpeed
        self.windDirection = windDirection
        self.pressure = pressure
        self.cloudCover = cloudCover
    }
}
