import FeedCore
import Foundation
import Testing

/// The response bodies under Fixtures/, written in the shapes Reddit documents and sends.
enum Fixture {
    struct Missing: Error, CustomStringConvertible {
        var name: String
        var description: String { "no fixture \(name)" }
    }

    static func data(_ name: String) throws -> Data {
        let base = (name as NSString).deletingPathExtension
        let ext = (name as NSString).pathExtension
        guard let url = Bundle.module.url(forResource: base, withExtension: ext, subdirectory: "Fixtures") else { throw Missing(name: name) }
        return try Data(contentsOf: url)
    }

    /// A 200 with `name` as body.
    static func ok(_ name: String, headers: [String: String] = [:]) throws -> RedditResponse {
        RedditResponse(status: 200, headers: headers, body: try data(name))
    }
}
