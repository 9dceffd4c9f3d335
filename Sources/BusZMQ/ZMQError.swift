import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// An error from a libzmq call: the errno it set and the name of the call, so a log line says
/// which operation failed and why.
public struct ZMQError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The `errno` value libzmq reported (`zmq_errno()`).
    public let code: Int32
    /// The libzmq function that failed, e.g. `"zmq_bind(tcp://127.0.0.1:5555)"`.
    public let call: String

    public init(code: Int32, call: String) {
        self.code = code
        self.call = call
    }

    /// True when the context was terminated (`ETERM`): the owner is shutting down.
    public var isTerminated: Bool { code == ETERM }

    public var description: String {
        let text = String(cString: zmq_strerror(code))
        return "\(call) failed: \(text) (errno \(code))"
    }
}

/// The one place every `zmq_*` call goes through: retries `EINTR`, maps `EAGAIN` to `nil`,
/// and throws a ``ZMQError`` that keeps the errno and the call's name.
@inline(__always)
func zmqCall(_ call: @autoclosure () -> String, _ body: () -> Int32) throws(ZMQError) -> Int32? {
    while true {
        let rc = body()
        if rc >= 0 { return rc }
        let errno = zmq_errno()
        if errno == EINTR { continue }
        if errno == EAGAIN { return nil }
        throw ZMQError(code: errno, call: call())
    }
}

/// Like ``zmqCall(_:_:)`` for calls where `EAGAIN` is itself an error (bind, connect, options).
@inline(__always)
@discardableResult
func zmqCheck(_ call: @autoclosure () -> String, _ body: () -> Int32) throws(ZMQError) -> Int32 {
    while true {
        let rc = body()
        if rc >= 0 { return rc }
        let errno = zmq_errno()
        if errno == EINTR { continue }
        throw ZMQError(code: errno, call: call())
    }
}
