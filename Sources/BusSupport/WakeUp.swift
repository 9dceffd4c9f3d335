import Glibc

/// A self-pipe that wakes a `zmq_poll` loop from other threads. Thread-safe: writes of a byte
/// to a pipe are atomic, and the descriptors never change after init.
package final class WakeUp: Sendable {
    /// The end `zmq_poll` watches.
    package let fd: Int32
    private let writeFD: Int32

    package init() {
        var fds: [Int32] = [-1, -1]
        let rc = pipe(&fds)
        precondition(rc == 0, "pipe() failed: errno \(errno)")
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        fd = fds[0]
        writeFD = fds[1]
    }

    /// Makes the read end readable. A full pipe already is, so a failed write is fine.
    package func signal() {
        var one: UInt8 = 1
        _ = write(writeFD, &one, 1)
    }

    /// Empties the pipe after a poll found it readable.
    package func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(fd, &buffer, buffer.count) > 0 {}
    }

    package func close() {
        Glibc.close(fd)
        Glibc.close(writeFD)
    }
}
