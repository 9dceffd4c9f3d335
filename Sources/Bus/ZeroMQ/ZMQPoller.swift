import CZeroMQ

/// A `zmq_poll` set over sockets and plain file descriptors (`zmq_poller_*` is draft API,
/// hidden in Debian's header). Rebuilt only when the set of sockets changes.
public struct ZMQPoller {
    private var items: [zmq_pollitem_t] = []

    public init() {}

    /// Adds a socket for readability (and writability when asked); returns its index.
    @discardableResult
    public mutating func add(_ socket: ZMQSocket, writable: Bool = false) -> Int {
        let events = Int16(ZMQ_POLLIN) | (writable ? Int16(ZMQ_POLLOUT) : 0)
        items.append(zmq_pollitem_t(socket: socket.raw, fd: 0, events: events, revents: 0))
        return items.count - 1
    }

    /// Adds a file descriptor for readability (an eventfd wake-up); returns its index.
    @discardableResult
    public mutating func add(fd: Int32) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fd, events: Int16(ZMQ_POLLIN), revents: 0))
        return items.count - 1
    }

    public mutating func removeAll() { items.removeAll(keepingCapacity: true) }

    public var count: Int { items.count }

    /// Waits up to `timeoutMs` (-1 forever) for readability; returns how many items are ready.
    public mutating func poll(timeoutMs: Int) throws(ZMQError) -> Int {
        let count = items.count
        return try items.withUnsafeMutableBufferPointer { (buffer) throws(ZMQError) -> Int in
            Int(try zmqCall("zmq_poll") { zmq_poll(buffer.baseAddress, Int32(count), timeoutMs) } ?? 0)
        }
    }

    /// Whether item `index` was writable in the last poll.
    public func isWritable(_ index: Int) -> Bool {
        items[index].revents & Int16(ZMQ_POLLOUT) != 0
    }

    /// Whether item `index` was readable in the last poll.
    public func isReadable(_ index: Int) -> Bool {
        items[index].revents & Int16(ZMQ_POLLIN) != 0
    }
}
