import CZeroMQ

/// Reusable `zmq_msg_t`s for receiving multipart messages without copying: the frames stay in
/// libzmq's buffers and are read (or forwarded with `zmq_msg_send`) in place. Frames past the
/// last slot are received into it, overwriting each other, and only counted. Thread-confined
/// like the socket it reads; `close()` releases the messages.
package final class ZMQParts {
    let capacity: Int
    private let messages: UnsafeMutablePointer<zmq_msg_t>
    private var closed = false

    package init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        messages = .allocate(capacity: capacity)
        for i in 0..<capacity { zmq_msg_init(messages + i) }
    }

    deinit {
        assert(closed, "ZMQParts was not closed")
        if !closed { close() }
    }

    package func close() {
        guard !closed else { return }
        closed = true
        for i in 0..<capacity { zmq_msg_close(messages + i) }
        messages.deallocate()
    }

    /// The message in slot `index`.
    @inline(__always)
    package subscript(index: Int) -> UnsafeMutablePointer<zmq_msg_t> { messages + index }

    /// The bytes of slot `index`, valid until the next receive into it.
    @inline(__always)
    package func bytes(_ index: Int) -> UnsafeRawBufferPointer {
        let msg = messages + index
        return UnsafeRawBufferPointer(start: zmq_msg_data(msg), count: zmq_msg_size(msg))
    }

    /// Receives one whole multipart message from `socket`. Returns its frame count, or nil
    /// when none is waiting (`dontWait`, `EAGAIN`). Throws other errors.
    package func receive(_ socket: ZMQSocket, dontWait: Bool = true) throws(ZMQError) -> Int? {
        let raw = socket.raw
        socket.needsEventCheck = true
        while true {
            if zmq_msg_recv(messages, raw, dontWait ? ZMQ_DONTWAIT : 0) >= 0 { break }
            let code = zmq_errno()
            if code == EINTR { continue }
            if code == EAGAIN {
                socket.needsEventCheck = false
                return nil
            }
            throw ZMQError(code: code, call: "zmq_msg_recv(\(socket.endpoint))")
        }
        var count = 1
        while zmq_msg_more(messages + min(count - 1, capacity - 1)) == 1 {
            // The rest of a message is queued atomically with its first frame.
            if zmq_msg_recv(messages + min(count, capacity - 1), raw, 0) < 0 { break }
            count += 1
        }
        return count
    }
}
