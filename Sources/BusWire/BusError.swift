import BusZMQ

/// Everything that can go wrong on the bus, with enough context to act on.
public enum BusError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A topic or pattern that breaks the naming rules.
    case invalidTopic(String, reason: String)
    /// Bytes that do not follow docs/PROTOCOL.md.
    case malformed(String)
    /// A payload that could not be encoded or decoded as the expected type.
    case invalidPayload(String)
    /// No reply before the deadline.
    case timeout(service: String, method: String, seconds: Double)
    /// An error reply: the status code and the structured error from the other side.
    case reply(status: Int, code: String, message: String)
    /// The kernel could not be reached (socket setup failed, or it never answered).
    case unreachable(endpoint: String, reason: String)
    /// The client was closed.
    case closed
    /// The calling task was cancelled.
    case cancelled
    /// A libzmq call failed.
    case zmq(ZMQError)
    /// A bad option or argument.
    case usage(String)

    public var description: String {
        switch self {
        case .invalidTopic(let topic, let reason): return "invalid topic '\(topic)': \(reason)"
        case .malformed(let what): return "malformed message: \(what)"
        case .invalidPayload(let what): return "invalid payload: \(what)"
        case .timeout(let service, let method, let seconds):
            return "no reply from \(service).\(method) within \(seconds) s"
        case .reply(let status, let code, let message): return "\(status) \(code): \(message)"
        case .unreachable(let endpoint, let reason): return "kernel at \(endpoint) is unreachable: \(reason)"
        case .closed: return "the bus connection is closed"
        case .cancelled: return "cancelled"
        case .zmq(let error): return error.description
        case .usage(let text): return text
        }
    }

    /// The status of an error reply, if this is one.
    public var status: Int? {
        if case .reply(let status, _, _) = self { return status }
        return nil
    }
}
