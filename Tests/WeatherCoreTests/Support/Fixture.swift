import Foundation

@testable import WeatherCore

/// JSON fixtures written in the shapes the providers document (see Fixtures/).
enum Fixture {
    struct Missing: Error, CustomStringConvertible {
        var name: String
        var description: String { "no fixture \(name).json in the test bundle" }
    }

    static func data(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures") else { throw Missing(name: name) }
        return try Data(contentsOf: url)
    }

    static func response(_ name: String, status: Int = 200, headers: [String: String] = [:]) throws -> UpstreamResponse {
        UpstreamResponse(status: status, headers: headers, body: try data(name))
    }

    /// A response with an inline body.
    static func response(status: Int, _ body: String, headers: [String: String] = [:]) -> UpstreamResponse {
        UpstreamResponse(status: status, headers: headers, body: Data(body.utf8))
    }

    /// A fixture's JSON object with one change, for the malformed variants.
    static func modified(_ name: String, _ change: (inout [String: Any]) -> Void) throws -> UpstreamResponse {
        var object = try JSONSerialization.jsonObject(with: data(name)) as? [String: Any] ?? [:]
        change(&object)
        return UpstreamResponse(status: 200, body: try JSONSerialization.data(withJSONObject: object))
    }

    /// 2025-01-01T04:20:00Z.
    static let fetchedAt = Date(timeIntervalSince1970: 1_735_705_200)
}
