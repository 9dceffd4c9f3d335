/// An endpoint resolved to what an HTTP request needs, before a host, a `.json` suffix,
/// `raw_json=1` or headers are added. Every user-given part has been validated.
struct RedditRoute {
    enum Method: String {
        case get = "GET"
        case post = "POST"
    }

    var method: Method
    /// Path segments, each already validated (names, ids) or a fixed word.
    var segments: [String]
    var query: [(String, String)] = []
    var form: [(String, String)] = []
}
