/// Open-Meteo's error body: `{"error":true,"reason":"..."}`.
struct OpenMeteoErrorBody: Decodable {
    var error: Bool
    var reason: String
}
