import CZeroMQ
import Glibc

/// Waits for ZeroMQ sockets and plain file descriptors (an eventfd wake-up) to become ready.
///
/// It polls each socket's `ZMQ_FD` itself instead of calling `zmq_poll`, which asks every socket
/// for `ZMQ_EVENTS` before and after each wait: with libzmq 4.3 each of those asks costs a
/// `getpid` and a `poll` system call when nothing is pending, so a loop over four sockets made
/// about seventeen system calls per turn. `ZMQ_FD` is edge-triggered: it becomes readable when
/// libzmq queues the socket a command (a message arrived in an empty pipe, room appeared), and
/// any operation on the socket may consume that signal. So a socket is asked for `ZMQ_EVENTS`
/// before the wait when it was used since it was last known to be drained
/// (``ZMQSocket/needsEventCheck``, kept by `ZMQSocket`'s operations: a receive that ends in
/// `EAGAIN` leaves the socket drained, any send or received message does not), and after the
/// wait when its descriptor fired and it was not already found ready.
package struct ZMQPoller {
    private var sockets: [ZMQSocket?] = []
    private var wanted: [Int16] = []
    private var fds: [pollfd] = []
    private var ready: [Int16] = []

    package init() {}

    /// Adds a socket for readability (and writability when asked); returns its index. Not
    /// for the writability of a PUB or XPUB: libzmq reports them writable whether or not their
    /// pipes have room, so waiting for it never waits.
    @discardableResult
    package mutating func add(_ socket: ZMQSocket, writable: Bool = false) -> Int {
        sockets.append(socket)
        wanted.append(Int16(ZMQ_POLLIN) | (writable ? Int16(ZMQ_POLLOUT) : 0))
        fds.append(pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0))
        ready.append(0)
        return sockets.count - 1
    }

    /// Adds a file descriptor for readability (an eventfd wake-up); returns its index.
    @discardableResult
    package mutating func add(fd: Int32) -> Int {
        sockets.append(nil)
        wanted.append(Int16(ZMQ_POLLIN))
        fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
        ready.append(0)
        return sockets.count - 1
    }

    package mutating func removeAll() {
        sockets.removeAll(keepingCapacity: true)
        wanted.removeAll(keepingCapacity: true)
        fds.removeAll(keepingCapacity: true)
        ready.removeAll(keepingCapacity: true)
    }

    package var count: Int { sockets.count }

    /// Stops (or resumes) watching item `index` for readability, keeping its place in the set:
    /// a socket whose messages the owner wants to leave queued for a while (backpressure)
    /// would otherwise report readable on every turn.
    package mutating func watchReadable(_ index: Int, _ watch: Bool) {
        let readable = Int16(ZMQ_POLLIN)
        wanted[index] = watch ? wanted[index] | readable : wanted[index] & ~readable
        fds[index].events = wanted[index] == 0 ? 0 : Int16(POLLIN)
        // Resumed: what arrived meanwhile may not fire the descriptor again.
        if watch { sockets[index]?.needsEventCheck = true }
    }

    /// Waits up to `timeoutMs` (-1 forever) until an item is ready; returns how many are.
    /// Throws the socket's error when asking it for its events fails (`ETERM` once the context
    /// is terminated).
    package mutating func poll(timeoutMs: Int) throws(ZMQError) -> Int {
        var timeout = Int32(clamping: timeoutMs)
        // Sockets used since they were last drained: their descriptor may not fire for what
        // is already pending, so ask them first, and do not sleep if one is ready.
        for index in sockets.indices {
            ready[index] = 0
            // A socket closed since the set was built (a handler replaced it) is skipped until
            // the owner rebuilds the set.
            guard let socket = sockets[index], !socket.isClosed, wanted[index] != 0,
                socket.needsEventCheck || wanted[index] & Int16(ZMQ_POLLOUT) != 0
            else { continue }
            ready[index] = try socket.events() & wanted[index]
            if ready[index] != 0 { timeout = 0 }
        }
        let count = fds.count
        let rc = fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t(count), timeout) }
        if rc < 0 {
            let code = errno
            if code != EINTR { throw ZMQError(code: code, call: "poll") }
        }
        var readyCount = 0
        for index in sockets.indices {
            if fds[index].revents != 0 {
                if let socket = sockets[index] {
                    // A socket found ready before the wait is not asked again: its owner reads it
                    // next. Asking handles the commands libzmq queued it, and a SUB found readable
                    // has pre-read the first frame of its next message (see `SocketTuning.subscriber`).
                    // Its descriptor stays readable until a call handles the commands (an ask, a
                    // receive ending in `EAGAIN`): the owner's read usually does this turn, else
                    // the next turn's ask does.
                    if ready[index] == 0, !socket.isClosed, wanted[index] != 0 {
                        ready[index] = try socket.events() & wanted[index]
                    }
                } else {
                    ready[index] = Int16(ZMQ_POLLIN)
                }
            }
            if ready[index] != 0 { readyCount += 1 }
        }
        return readyCount
    }

    /// Whether item `index`'s descriptor fired in the last poll: for a socket, libzmq queued
    /// it a command (a message, or a pipe with room again), whatever its events say now.
    package func fired(_ index: Int) -> Bool {
        fds[index].revents != 0
    }

    /// Whether item `index` was writable in the last poll.
    package func isWritable(_ index: Int) -> Bool {
        ready[index] & Int16(ZMQ_POLLOUT) != 0
    }

    /// Whether item `index` was readable in the last poll.
    package func isReadable(_ index: Int) -> Bool {
        ready[index] & Int16(ZMQ_POLLIN) != 0
    }
}
