/// Open-Meteo's `/v1/forecast` answer for the variables ``OpenMeteoEndpoints`` asks for:
/// parallel arrays aligned with `time`, and their units. Values past a model's range are
/// `null`, hence the optional elements.
struct OpenMeteoForecastResponse: Decodable {
    struct Current: Decodable {
        var time: String
        var temperature2m: Double
        var weatherCode: Int
        var apparentTemperature: Double?
        var relativeHumidity2m: Double?
        var windSpeed10m: Double?
        var windDirection10m: Double?
        var pressureMsl: Double?
        var cloudCover: Double?

        enum CodingKeys: String, CodingKey {
            case time
            case temperature2m = "temperature_2m"
            case weatherCode = "weather_code"
            case apparentTemperature = "apparent_temperature"
            case relativeHumidity2m = "relative_humidity_2m"
            case windSpeed10m = "wind_speed_10m"
            case windDirection10m = "wind_direction_10m"
            case pressureMsl = "pressure_msl"
            case cloudCover = "cloud_cover"
        }
    }

    struct Hourly: Decodable {
        var time: [String]
        var temperature2m: [Double?]
        var precipitationProbability: [Double?]?
        var weatherCode: [Int?]

        enum CodingKeys: String, CodingKey {
            case time
            case temperature2m = "temperature_2m"
            case precipitationProbability = "precipitation_probability"
            case weatherCode = "weather_code"
        }
    }

    struct Daily: Decodable {
        var time: [String]
        var weatherCode: [Int?]
        var temperature2mMax: [Double?]
        var temperature2mMin: [Double?]

        enum CodingKeys: String, CodingKey {
            case time
            case weatherCode = "weather_code"
            case temperature2mMax = "temperature_2m_max"
            case temperature2mMin = "temperature_2m_min"
        }
    }

    var utcOffsetSeconds: Int
    var timezone: String?
    var currentUnits: [String: String]?
    var current: Current
    var hourlyUnits: [String: String]?
    var hourly: Hourly
    var dailyUnits: [String: String]?
    var daily: Daily

    enum CodingKeys: String, CodingKey {
        case utcOffsetSeconds = "utc_offset_seconds"
        case timezone
        case currentUnits = "current_units"
        case current
        case hourlyUnits = "hourly_units"
        case hourly
        case dailyUnits = "daily_units"
        case daily
    }
}
