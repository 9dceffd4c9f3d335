import CZeroMQ

/// A libzmq context.
///
/// `@unchecked Sendable`: libzmq documents the context as thread-safe (zmq(7)); sockets made from
/// it are not, and stay on the thread that owns them.
package final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

    /// Creates a context with `ioThreads` libzmq I/O threads.
    package init(ioThreads: Int32 = 1) {
        guard let ctx = zmq_ctx_new() else { fatalError("zmq_ctx_new returned NULL: out of memory") }
        zmq_ctx_set(ctx, ZMQ_IO_THREADS, ioThreads)
        zmq_ctx_set(ctx, ZMQ_BLOCKY, 0)
        handle = ctx
    }

    /// Makes every blocking call on this context's sockets return `ETERM`.
    package func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    /// Terminates the context. Every socket must have been closed first.
    package func terminate() {
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    /// Whether libzmq was built with a capability, e.g. `"curve"`.
    package static func has(_ capability: String) -> Bool {
        zmq_has(capability) == 1
    }

    /// The libzmq version as "major.minor.patch".
    package static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}
