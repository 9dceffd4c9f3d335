/// OpenWeatherMap's error body: `{"cod":401,"message":"Invalid API key. ..."}` or
/// `{"cod":"404","message":"city not found"}`.
struct OpenWeatherMapErrorBody: Decodable {
    var cod: OpenWeatherMapCode
    var message: String?
}
