import CZeroMQ

/// One frame kept in the `zmq_msg_t` libzmq received it in: read in place, and sent without a
/// copy of its bytes (``ZMQSocket/send(_:more:)`` hands libzmq a second reference to its buffer,
/// `zmq_msg_copy`: libzmq counts the references, and the message keeps its bytes). The kernel
/// forwards request and reply bodies in these
/// (``ZMQSocket/receive(dontWait:property:lastAsMessage:)``). Used by one thread at a time, like
/// the socket it came from; `deinit` closes it.
public final class ZMQMessage: Equatable {
    // Read and changed only through `withMessage`, one call at a time on the owning thread: no
    // access can overlap.
    @exclusivity(unchecked) private var message = zmq_msg_t()

    /// The largest message libzmq may receive into a buffer it shares with the messages read
    /// with it (`ZMQ_IN_BATCH_SIZE`, libzmq's default, which the bus does not change): with
    /// zero-copy receiving (libzmq's default), such a message points into that buffer (its data
    /// and a reference counter per message it can hold) and keeps all of it allocated while it
    /// lives. A larger message is received into a buffer of its own.
    package static let sharedBufferLimit = 8192

    /// An empty message.
    package init() {
        zmq_msg_init(&message)
    }

    /// A message holding a copy of `bytes`.
    package convenience init(_ bytes: [UInt8]) {
        self.init()
        withMessage { message in
            zmq_msg_close(message)
            // Fails only when out of memory, as an array's allocation would.
            precondition(zmq_msg_init_size(message, bytes.count) == 0, "zmq_msg_init_size(\(bytes.count)): \(zmq_errno())")
            if !bytes.isEmpty {
                bytes.withUnsafeBytes { UnsafeMutableRawPointer(zmq_msg_data(message)!).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            }
        }
    }

    deinit {
        zmq_msg_close(&message)
    }

    /// Runs `body` with the `zmq_msg_t` (valid only inside it).
    @inline(__always)
    package func withMessage<R, E: Error>(_ body: (UnsafeMutablePointer<zmq_msg_t>) throws(E) -> R) throws(E) -> R {
        try withUnsafeMutablePointer(to: &message) { pointer throws(E) in try body(pointer) }
    }

    /// Its size in bytes.
    package var count: Int { withMessage { zmq_msg_size($0) } }

    /// Runs `body` with its bytes, read in place (valid only inside it).
    @inline(__always)
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withMessage { message in
            let count = zmq_msg_size(message)
            return body(UnsafeRawBufferPointer(start: count == 0 ? nil : zmq_msg_data(message), count: count))
        }
    }

    /// Its bytes as an array (a copy).
    package var bytes: [UInt8] { withBytes { Array($0) } }

    public static func == (lhs: ZMQMessage, rhs: ZMQMessage) -> Bool {
        lhs === rhs || lhs.withBytes { a in rhs.withBytes { b in a.elementsEqual(b) } }
    }
}
