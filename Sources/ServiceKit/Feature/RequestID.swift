/// Identifies one bus request waiting for its reply while the reducer works on it: the
/// reducer answers it with ``Effect/reply(_:_:)`` or ``Effect/fail(_:_:)``.
public struct RequestID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let value: Int
    public init(_ value: Int) { self.value = value }
    public var description: String { "#\(value)" }
}
