import Foundation

/// Builds request URLs under a configurable base URL (which may carry a path prefix).
enum QueryEncoding {
    /// Unreserved characters and the comma, which both providers use as a list separator.
    /// Everything else is percent-encoded, `+` and `&` included (URLComponents leaves `+` as is,
    /// and servers read it as a space).
    private static let allowed: CharacterSet = {
        var set = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        set.insert(",")
        return set
    }()

    static func url(base: URL, path: String, query: [(String, String)]) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false) ?? URLComponents()
        var prefix = components.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        components.percentEncodedPath = prefix + path
        components.percentEncodedQuery = query.map { "\($0.0)=\(encode($0.1))" }.joined(separator: "&")
        components.fragment = nil
        // Every piece above is valid percent-encoded text, so the URL always forms.
        return components.url!
    }

    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// A coordinate with at most 5 decimals (about a metre), never in exponent form.
    static func coordinate(_ value: Double) -> String {
        var text = String(format: "%.5f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
