import CZeroMQ

/// Reusable `zmq_msg_t`s for receiving multipart messages without copying: the frames stay in
/// libzmq's buffers and are read (or forwarded with `zmq_msg_send`) in place. Frames past the
/// last slot are received into it, overwriting each other, and only counted. Thread-confined
/// like the socket it reads; `close()` releases the messages.
package final class ZMQParts {
    package let capacity: Int
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

    /// The size in bytes of slot `index`.
    @inline(__always)
    package func size(_ index: Int) -> Int { zmq_msg_size(messages + index) }

    /// A metadata property of the connection slot `index` came from (`"User-Id"` set by ZAP),
    /// valid while the slot holds that frame; nil when the connection has none.
    @inline(__always)
    package func property(_ index: Int, _ name: UnsafePointer<CChar>) -> UnsafePointer<CChar>? {
        zmq_msg_gets(messages + index, name)
    }

    /// Receives one whole multipart message from `socket`. Returns its frame count, or nil
    /// when none is waiting (`dontWait`, `EAGAIN`). Throws other errors.
    package func receive(_ socket: ZMQSocket, dontWait: Bool = true) throws(ZMQError) -> Int? {
        let raw = socket.raw
        socket.needsEventCheck = true
        let messages = self.messages
        guard try zmqCall("zmq_msg_recv(\(socket.endpoint))", { zmq_msg_recv(messages, raw, dontWait ? ZMQ_DONTWAIT : 0) }) != nil else {
            socket.needsEventCheck = false
            return nil
        }
        var count = 1
        while zmq_msg_more(messages + min(count - 1, capacity - 1)) == 1 {
            // The rest of a message is queued atomically with its first frame: waiting is
            // never needed, and a failure here is the context ending.
            let slot = messages + min(count, capacity - 1)
            _ = try zmqCall("zmq_msg_recv(\(socket.endpoint))", { zmq_msg_recv(slot, raw, 0) })
            count += 1
        }
        return count
    }

    /// Sends slots `0..<count` as one message on `socket`, handing each frame's buffer to
    /// libzmq without a copy (the slots are empty afterwards). False when the first frame met a
    /// full queue (`EAGAIN`): nothing was sent and the slots still hold the message. Throws
    /// other errors (the context ending).
    package func send(_ socket: ZMQSocket, count: Int) throws(ZMQError) -> Bool {
        precondition(count > 0 && count <= capacity)
        let raw = socket.raw
        socket.needsEventCheck = true
        let messages = self.messages
        let first = count > 1 ? ZMQ_SNDMORE | ZMQ_DONTWAIT : ZMQ_DONTWAIT
        guard try zmqCall("zmq_msg_send(\(socket.endpoint))", { zmq_msg_send(messages, raw, first) }) != nil else { return false }
        for index in 1..<count {
            // Queued atomically with the first frame: libzmq never refuses the rest.
            let flags = index < count - 1 ? ZMQ_SNDMORE : 0
            _ = try zmqCall("zmq_msg_send(\(socket.endpoint))", { zmq_msg_send(messages + index, raw, flags) })
        }
        return true
    }
}
