import Foundation

/// Decodes a provider's JSON body, turning every failure into
/// ``WeatherUpstreamError/invalidResponse(_:detail:)`` with the path that failed and an excerpt.
enum JSONBody {
    static func decode<T: Decodable>(_ type: T.Type, from response: UpstreamResponse, provider: WeatherProvider) throws(WeatherUpstreamError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: response.body)
        } catch let error as DecodingError {
            throw .invalidResponse(provider, detail: "\(describe(error)) in \(response.excerpt)")
        } catch {
            throw .invalidResponse(provider, detail: "not JSON: \(response.excerpt)")
        }
    }

    /// Whether the body parses as the type, for telling error bodies apart.
    static func attempt<T: Decodable>(_ type: T.Type, from body: Data) -> T? {
        try? JSONDecoder().decode(T.self, from: body)
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return "not JSON"
        case .dataCorrupted(let context):
            return "bad value at \(path(context.codingPath))"
        case .keyNotFound(let key, let context):
            return "missing \(path(context.codingPath + [key]))"
        case .typeMismatch(let type, let context):
            return "expected \(type) at \(path(context.codingPath))"
        case .valueNotFound(let type, let context):
            return "null where \(type) is required at \(path(context.codingPath))"
        @unknown default:
            return "undecodable"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        if keys.isEmpty { return "the top level" }
        return keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingPrefix(".").description
    }
}
