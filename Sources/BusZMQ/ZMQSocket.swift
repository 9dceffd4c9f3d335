import BusSupport
import CZeroMQ

/// The socket types the bus uses (zmq_socket(3)).
package enum ZMQSocketType: Int32, Sendable {
    case pair = 0, pub = 1, sub = 2, req = 3, rep = 4, dealer = 5, router = 6
    case pull = 7, push = 8, xpub = 9, xsub = 10, stream = 11
}

/// One multipart message: a list of frames.
public typealias Frames = [[UInt8]]

/// A libzmq socket. Not thread-safe (libzmq's rule): it is created, used and closed on the one
/// thread that owns it. Closing is explicit; `deinit` only checks that it happened.
package final class ZMQSocket {
    // `handle` and `needsEventCheck` are read or set on every send and receive. A socket is
    // used by one thread at a time and neither is ever passed `inout`, so the run-time
    // exclusivity check each access cost (a few percent of an I/O thread's time per message)
    // can never fire: it is turned off for these two.
    @exclusivity(unchecked) private(set) var handle: UnsafeMutableRawPointer?
    package let type: ZMQSocketType
    /// Where the socket was bound or connected, for error messages.
    package private(set) var endpoint: String = ""
    /// True when the socket was used since it was last known to have nothing pending: its
    /// edge-triggered `ZMQ_FD` may then not fire for what is already there, so ``ZMQPoller``
    /// asks for ``events()`` before it waits. A receive that ends in `EAGAIN` and ``events()``
    /// clear it; anything else that reaches libzmq sets it.
    @exclusivity(unchecked) package var needsEventCheck = true
    /// The last two different small frames ``receive(dontWait:property:)`` read at each of a
    /// message's first positions (slots `2 * position` and `2 * position + 1`; `recentLast`
    /// says which of the two was used last). A frame with the same bytes at the same position is
    /// handed out as that array again instead of a new one: on a request-plane socket the
    /// 7/MDP headers (`MDPC01`, `MDPW01`, the command byte), a busy peer's routing id and a
    /// service's name repeat on nearly every message, and each would be an allocation and a
    /// free. Two per position because the kernel's ROUTER interleaves two shapes, client
    /// requests and worker replies. Confined to the socket's thread like `handle`, changed in
    /// place only.
    @exclusivity(unchecked) private var recentFrames = [[UInt8]](repeating: [], count: 2 * ZMQSocket.recentPositions)
    /// Bit `position`: which of the two `recentFrames` slots at `position` was used last
    /// (0: `2 * position`, 1: `2 * position + 1`).
    @exclusivity(unchecked) private var recentLast: UInt16 = 0
    /// At most 16: one bit of `recentLast` each.
    static let recentPositions = 8
    static let recentMaxSize = 32

    /// Creates a socket of `type` on `context` and applies `tuning`.
    package init(_ context: ZMQContext, _ type: ZMQSocketType, tuning: SocketTuning = .default) throws(ZMQError) {
        guard let socket = zmq_socket(context.handle, type.rawValue) else {
            throw ZMQError(code: zmq_errno(), call: "zmq_socket(\(type))")
        }
        self.handle = socket
        self.type = type
        do {
            try tuning.apply(to: self)
        } catch {
            zmq_close(socket)
            self.handle = nil
            throw error
        }
    }

    deinit {
        assert(handle == nil, "ZMQSocket(\(type), \(endpoint)) was not closed")
        close()
    }

    /// Closes the socket. Linger is always bounded (see ``SocketTuning``), so this never hangs
    /// context termination.
    package func close() {
        if let handle {
            // A monitor is stopped first: libzmq's I/O thread writes monitor events with a
            // blocking send, so an event of this socket's closing connections, written after
            // the monitor's reader is gone, would stop that thread, and every connection of
            // the context with it, for good.
            if isMonitored { zmq_socket_monitor(handle, nil, 0) }
            zmq_close(handle)
        }
        handle = nil
    }

    /// True while a ``ZMQMonitor`` watches this socket.
    var isMonitored = false

    /// True once ``close()`` ran.
    package var isClosed: Bool { handle == nil }

    package var raw: UnsafeMutableRawPointer {
        guard let handle else { preconditionFailure("use of closed ZMQSocket(\(type), \(endpoint))") }
        return handle
    }

    // MARK: options

    /// Sets an integer option (`ZMQ_LINGER`, `ZMQ_SNDHWM`, ...).
    package func set(_ option: Int32, _ value: Int32) throws(ZMQError) {
        var v = value
        needsEventCheck = true
        let raw = self.raw
        try zmqCheck("zmq_setsockopt(\(option)=\(value))") {
            zmq_setsockopt(raw, option, &v, MemoryLayout<Int32>.size)
        }
    }

    /// Sets a 64-bit integer option (`ZMQ_MAXMSGSIZE`).
    package func set64(_ option: Int32, _ value: Int64) throws(ZMQError) {
        var v = value
        needsEventCheck = true
        let raw = self.raw
        try zmqCheck("zmq_setsockopt(\(option)=\(value))") {
            zmq_setsockopt(raw, option, &v, MemoryLayout<Int64>.size)
        }
    }

    /// Sets a binary option (`ZMQ_SUBSCRIBE`, `ZMQ_ROUTING_ID`, CURVE keys).
    package func set(_ option: Int32, bytes: [UInt8]) throws(ZMQError) {
        needsEventCheck = true
        let raw = self.raw
        try zmqCheck("zmq_setsockopt(\(option), \(bytes.count) bytes)") {
            bytes.withUnsafeBytes { zmq_setsockopt(raw, option, $0.baseAddress, $0.count) }
        }
    }

    /// Sets a string option.
    package func set(_ option: Int32, string: String) throws(ZMQError) {
        try set(option, bytes: Array(string.utf8))
    }

    /// Reads an integer option.
    package func get(_ option: Int32) throws(ZMQError) -> Int32 {
        var v: Int32 = 0
        var size = MemoryLayout<Int32>.size
        let raw = self.raw
        try zmqCheck("zmq_getsockopt(\(option))") { zmq_getsockopt(raw, option, &v, &size) }
        return v
    }

    /// Reads a string option (`ZMQ_LAST_ENDPOINT`).
    package func getString(_ option: Int32) throws(ZMQError) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        var size = buffer.count
        let raw = self.raw
        try zmqCheck("zmq_getsockopt(\(option))") { zmq_getsockopt(raw, option, &buffer, &size) }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The file descriptor libzmq signals on (edge-triggered: re-read `ZMQ_EVENTS` after use).
    package var fileDescriptor: Int32 {
        var fd: Int32 = -1
        var size = MemoryLayout<Int32>.size
        zmq_getsockopt(raw, ZMQ_FD, &fd, &size)
        return fd
    }

    // MARK: bind / connect

    package func bind(_ endpoint: String) throws(ZMQError) {
        let raw = self.raw
        needsEventCheck = true
        try zmqCheck("zmq_bind(\(endpoint))") { zmq_bind(raw, endpoint) }
        self.endpoint = (try? getString(ZMQ_LAST_ENDPOINT)) ?? endpoint
    }

    package func connect(_ endpoint: String) throws(ZMQError) {
        let raw = self.raw
        needsEventCheck = true
        try zmqCheck("zmq_connect(\(endpoint))") { zmq_connect(raw, endpoint) }
        self.endpoint = endpoint
    }

    /// Ends the connection to `endpoint` made by ``connect(_:)`` (its queued messages go with it).
    package func disconnect(_ endpoint: String) throws(ZMQError) {
        let raw = self.raw
        needsEventCheck = true
        try zmqCheck("zmq_disconnect(\(endpoint))") { zmq_disconnect(raw, endpoint) }
    }

    package func subscribe(_ prefix: [UInt8]) throws(ZMQError) {
        try set(ZMQ_SUBSCRIBE, bytes: prefix)
    }

    package func unsubscribe(_ prefix: [UInt8]) throws(ZMQError) {
        try set(ZMQ_UNSUBSCRIBE, bytes: prefix)
    }

    // MARK: send / receive

    /// Sends a multipart message. Returns `false` when it would block (`EAGAIN`) with
    /// `dontWait`, or for a ROUTER with `ZMQ_ROUTER_MANDATORY` whose peer queue is full.
    /// Throws `EHOSTUNREACH` for an unroutable ROUTER message.
    @discardableResult
    package func send(_ frames: Frames, dontWait: Bool = true) throws(ZMQError) -> Bool {
        precondition(!frames.isEmpty, "a message has at least one frame")
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            guard try sendFrame(frame, more: index < last, dontWait: dontWait) else {
                // Only the first frame can hit EAGAIN: libzmq queues the rest atomically.
                precondition(index == 0, "EAGAIN in the middle of a multipart message")
                return false
            }
        }
        return true
    }

    /// Sends a three-frame message without building a frame list (an event:
    /// `[topic][meta][payload]`); like ``send(_:dontWait:)`` with `dontWait`.
    package func send(_ first: [UInt8], _ second: [UInt8], _ third: [UInt8]) throws(ZMQError) -> Bool {
        // Only the first frame can hit EAGAIN: libzmq queues the rest atomically.
        guard try sendFrame(first, more: true, dontWait: true) else { return false }
        _ = try sendFrame(second, more: true, dontWait: true)
        _ = try sendFrame(third, more: false, dontWait: true)
        return true
    }

    /// Sends one frame from memory libzmq copies at once, without waiting; false on `EAGAIN`.
    /// `more` says another frame of the message follows.
    package func send(_ bytes: UnsafeRawBufferPointer, more: Bool) throws(ZMQError) -> Bool {
        try sendFrame(more: more, dontWait: true) { zmq_send($0, bytes.baseAddress, bytes.count, $1) }
    }

    /// One frame; false on `EAGAIN`.
    package func sendFrame(_ frame: [UInt8], more: Bool, dontWait: Bool) throws(ZMQError) -> Bool {
        try sendFrame(more: more, dontWait: dontWait) { raw, flags in frame.withUnsafeBytes { zmq_send(raw, $0.baseAddress, $0.count, flags) } }
    }

    /// One frame of `text`'s UTF-8, sent from the string's own storage without waiting; false
    /// on `EAGAIN`.
    package func send(utf8 text: String, more: Bool) throws(ZMQError) -> Bool {
        var text = text
        return try sendFrame(more: more, dontWait: true) { raw, flags in text.withUTF8 { zmq_send(raw, $0.baseAddress, $0.count, flags) } }
    }

    /// One frame of `count` bytes written by `fill` straight into the message libzmq sends
    /// (no array and no copy of it), without waiting; false on `EAGAIN`, and then nothing was
    /// sent. `fill` must write all `count` bytes.
    package func sendFrame(count: Int, more: Bool, fill: (UnsafeMutableRawBufferPointer) -> Void) throws(ZMQError) -> Bool {
        var msg = zmq_msg_t()
        guard zmq_msg_init_size(&msg, count) == 0 else { throw ZMQError(code: zmq_errno(), call: "zmq_msg_init_size(\(count))") }
        if count > 0 { fill(UnsafeMutableRawBufferPointer(start: zmq_msg_data(&msg), count: count)) }
        return try send(&msg, more: more)
    }

    /// Sends `message` as one frame without waiting and without copying its bytes: libzmq gets
    /// a second reference to its buffer (`zmq_msg_copy`), and `message` keeps its bytes. False
    /// on `EAGAIN`.
    package func send(_ message: ZMQMessage, more: Bool) throws(ZMQError) -> Bool {
        var msg = zmq_msg_t()
        zmq_msg_init(&msg)
        message.withMessage { original in
            // Fails only for a message that is not one (EFAULT).
            precondition(zmq_msg_copy(&msg, original) == 0, "zmq_msg_copy: \(zmq_errno())")
        }
        return try send(&msg, more: more)
    }

    /// Sends `msg` with `zmq_msg_send` without waiting: sent, it belongs to libzmq; not sent
    /// (`EAGAIN`: false, or an error), it is closed here.
    private func send(_ msg: inout zmq_msg_t, more: Bool) throws(ZMQError) -> Bool {
        let raw = self.raw
        needsEventCheck = true
        let flags = ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0)
        do {
            guard try zmqCall("zmq_msg_send(\(endpoint))", { zmq_msg_send(&msg, raw, flags) }) != nil else {
                zmq_msg_close(&msg)
                return false
            }
        } catch {
            zmq_msg_close(&msg)
            throw error
        }
        return true
    }

    /// The frame sends above: `send` calls `zmq_send` with the socket and the flags.
    @inline(__always)
    private func sendFrame(more: Bool, dontWait: Bool, _ send: (UnsafeMutableRawPointer, Int32) -> Int32) throws(ZMQError) -> Bool {
        let raw = self.raw
        needsEventCheck = true
        let flags = (dontWait ? ZMQ_DONTWAIT : 0) | (more ? ZMQ_SNDMORE : 0)
        return try zmqCall("zmq_send(\(endpoint))") { send(raw, flags) } != nil
    }

    /// Receives one whole multipart message, or `nil` when none is waiting (`dontWait`).
    package func receive(dontWait: Bool = true) throws(ZMQError) -> Frames? {
        try receive(dontWait: dontWait, property: nil)?.frames
    }

    /// Receives one multipart message and a connection property of its frames (such as
    /// `"User-Id"` set by ZAP, or `"Peer-Address"`).
    package func receive(
        dontWait: Bool = true, property: String?
    ) throws(ZMQError)
        -> (frames: Frames, property: String?)?
    {
        guard let received = try receive(dontWait: dontWait, property: property, lastAsMessage: nil) else { return nil }
        return (received.frames, received.property)
    }

    /// Receives one multipart message and a connection property of its frames, like
    /// ``receive(dontWait:property:)``; when `lastAsMessage` is given, a last frame at that
    /// position or later and over ``ZMQMessage/sharedBufferLimit`` (a large body) is not copied
    /// into an array: it comes back as `last`, in the message libzmq received it in, and
    /// `frames` holds the frames before it. A smaller frame is copied: kept as a message, it
    /// could hold a buffer libzmq shares with the messages read with it.
    package func receive(
        dontWait: Bool = true, property: String?, lastAsMessage: Int?
    ) throws(ZMQError)
        -> (frames: Frames, last: ZMQMessage?, property: String?)?
    {
        var frames: Frames = []
        frames.reserveCapacity(8)
        var value: String?
        var msg = zmq_msg_t()
        zmq_msg_init(&msg)
        defer { zmq_msg_close(&msg) }
        let raw = self.raw
        needsEventCheck = true
        while true {
            let flags: Int32 = (dontWait && frames.isEmpty) ? ZMQ_DONTWAIT : 0
            guard try zmqCall("zmq_msg_recv(\(endpoint))", { zmq_msg_recv(&msg, raw, flags) }) != nil else {
                // EAGAIN: libzmq processed its commands and found nothing; its descriptor
                // will fire for the next message.
                needsEventCheck = !frames.isEmpty
                return nil
            }
            // A ROUTER's routing-id frame is made locally and has no connection metadata: take
            // the property from the first frame that has it.
            if value == nil, let property, let cString = zmq_msg_gets(&msg, property) {
                value = String(cString: cString)
            }
            let size = zmq_msg_size(&msg)
            let isLast = zmq_msg_more(&msg) != 1
            if isLast, let position = lastAsMessage, frames.count >= position, size > ZMQMessage.sharedBufferLimit {
                let last = ZMQMessage()
                // Fails only for a message that is not one (EFAULT).
                let rc = last.withMessage { zmq_msg_move($0, &msg) }
                precondition(rc == 0, "zmq_msg_move: \(zmq_errno())")
                return (frames, last, value)
            }
            frames.append(size == 0 ? [] : frame(UnsafeRawBufferPointer(start: zmq_msg_data(&msg)!, count: size), at: frames.count))
            if isLast { return (frames, nil, value) }
        }
    }

    /// The frame at `position` of a message this socket received, as an array: a small frame
    /// with the bytes of one of the last two at that position is that array again
    /// (`recentFrames`). The slot used last is asked first; otherwise the other one, which a
    /// new array replaces when it does not match either, becomes the last used. A flag says
    /// which: swapping the two arrays instead would cost a uniqueness check, a retain and a
    /// release each time the kernel's ROUTER alternates a request and a reply.
    package func frame(_ bytes: UnsafeRawBufferPointer, at position: Int) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        guard bytes.count <= Self.recentMaxSize, position < Self.recentPositions else { return Array(bytes) }
        let bit = UInt16(1) << position
        let last = 2 * position + (recentLast & bit == 0 ? 0 : 1)
        if recentFrames[last].hasSameBytes(as: bytes) { return recentFrames[last] }
        let other = last ^ 1
        recentLast ^= bit
        if !recentFrames[other].hasSameBytes(as: bytes) { recentFrames[other] = Array(bytes) }
        return recentFrames[other]
    }

    /// Whether a message can be read now (`ZMQ_EVENTS & ZMQ_POLLIN`).
    package var isReadable: Bool {
        ((try? events()) ?? 0) & Int16(ZMQ_POLLIN) != 0
    }

    /// `ZMQ_EVENTS`: `ZMQ_POLLIN` when a message can be read, `ZMQ_POLLOUT` when one can be
    /// sent. Processes libzmq's pending commands, so afterwards the descriptor fires for
    /// anything new.
    package func events() throws(ZMQError) -> Int16 {
        let value = try get(ZMQ_EVENTS)
        needsEventCheck = false
        return Int16(truncatingIfNeeded: value)
    }
}
