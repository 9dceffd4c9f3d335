/// A failure as the bus reports it: HTTP-like status, stable snake_case code, one clear line.
public struct BusFailure: Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(status) \(code): \(message)" }
}
