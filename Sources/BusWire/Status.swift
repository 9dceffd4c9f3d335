/// Reply status codes (HTTP-like) used in reply bodies.
public enum Status {
    public static let ok = 200
    public static let badRequest = 400
    public static let forbidden = 403
    public static let notFound = 404
    public static let conflict = 409
    public static let payloadTooLarge = 413
    public static let internalError = 500
    public static let notImplemented = 501
    public static let unavailable = 503
    public static let timeout = 504

    /// True for 2xx.
    public static func isSuccess(_ status: Int) -> Bool { (200..<300).contains(status) }

    /// The default error code string for a status.
    public static func code(for status: Int) -> String {
        switch status {
        case 400: return "bad_request"
        case 403: return "forbidden"
        case 404: return "not_found"
        case 409: return "conflict"
        case 413: return "too_large"
        case 501: return "not_implemented"
        case 503: return "unavailable"
        case 504: return "timeout"
        default: return status < 300 ? "ok" : "internal"
        }
    }
}
