import BusSupport
import BusWire
import Foundation

/// A request as a method handler sees it.
public struct ServiceRequest: Sendable {
    public let method: String
    public let meta: RequestMeta
    public let payload: [UInt8]
    /// When the worker received it, on the monotonic clock: `MonotonicTime.now.nanoseconds(since:
    /// request.received)` is how long ago.
    public let received: MonotonicTime

    /// Decodes the JSON payload; an empty payload decodes as `{}`.
    /// - Throws: ``ServiceError`` 400 `invalid_json` naming the expected type.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws(ServiceError) -> T {
        let data = payload.isEmpty ? Data("{}".utf8) : Data(payload)
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            if (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) == nil {
                throw ServiceError(400, "invalid_json", "the payload of '\(method)' is not valid JSON")
            }
            throw ServiceError(400, "invalid_request", "the payload of '\(method)' is not a \(T.self): \(Self.describe(error))")
        }
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing field '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        default: return "\(error)"
        }
    }
}

/// An error a handler throws to answer with a given status and structured error.
public struct ServiceError: Error, Equatable, Sendable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String

    public init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public static func badRequest(_ message: String) -> ServiceError { ServiceError(400, "bad_request", message) }
    public static func notFound(_ message: String) -> ServiceError { ServiceError(404, "not_found", message) }
    public static func conflict(_ message: String) -> ServiceError { ServiceError(409, "conflict", message) }
    public static func forbidden(_ message: String) -> ServiceError { ServiceError(403, "forbidden", message) }
    public static func unavailable(_ message: String) -> ServiceError { ServiceError(503, "unavailable", message) }

    public var description: String { "\(status) \(code): \(message)" }
}
