import BusWire
import BusZMQ

/// Events waiting for the publisher socket, packed back to back in one buffer.
///
/// `publish` copies an event's frames in (under the I/O thread's queue lock) and the I/O thread
/// sends them from here. Handing over `[UInt8]`s instead cost an atomic retain on the
/// publishing thread and a release on the I/O thread for each of the topic, the shared meta
/// tail and the payload, on objects both cores touch: cache-line traffic on every event, about
/// a third of the publishing task's time. A frame over ``inlineLimit`` is kept by reference:
/// copying it would cost more than the reference does.
///
/// Not thread-safe: it is filled under `IOThread`'s queue lock and read by the I/O thread only
/// after being taken out of the queue.
final class PackedEvents {
    /// Frames up to this size are copied in.
    static let inlineLimit = 4096

    /// A record: the frame count (`UInt32`), then per frame its length (`UInt32`) and bytes,
    /// or ``byReference`` for the next frame of `large`. Lengths are unaligned native-endian.
    private var storage: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private var used = 0
    private var large: [[UInt8]] = []
    /// Events in the buffer.
    private(set) var count = 0

    private static let byReference = UInt32.max

    init(capacity: Int = 16 * 1024) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    var isEmpty: Bool { count == 0 }

    /// Empties the buffer, keeping its memory.
    func removeAll() {
        used = 0
        count = 0
        large.removeAll(keepingCapacity: true)
    }

    /// Appends an event from `BusClient.publish`: the meta frame is written here from the fixed
    /// fields and the client's shared encoding of the string fields.
    func append(
        topic: [UInt8], flags: EventMeta.Flags, seq: UInt64, timestampMicros: UInt64, metaTail: [UInt8], payload: [UInt8]
    ) {
        let metaSize = EventMeta.fixedSize + metaTail.count
        reserve(4 + Self.room(topic) + 4 + metaSize + Self.room(payload))
        put(UInt32(3))
        putFrame(topic)
        put(UInt32(metaSize))
        EventMeta.writeFixed(flags: flags, seq: seq, timestampMicros: timestampMicros, to: storage + used)
        used += EventMeta.fixedSize
        metaTail.withUnsafeBytes { copy($0) }
        putFrame(payload)
        count += 1
    }

    /// Appends an event already encoded as frames (`BusClient.send(event:)`; at least one).
    func append(frames: Frames) {
        precondition(!frames.isEmpty, "a message has at least one frame")
        reserve(frames.reduce(4) { $0 + Self.room($1) })
        put(UInt32(frames.count))
        for frame in frames { putFrame(frame) }
        count += 1
    }

    /// A read position: the next event to send.
    struct Cursor {
        fileprivate var offset = 0
        fileprivate var large = 0
        /// Events before this position.
        private(set) var event = 0
    }

    /// True when every event before `cursor`'s is all there is.
    func isFinished(_ cursor: Cursor) -> Bool { cursor.event >= count }

    /// Sends the event at `cursor` without waiting and moves past it. False when the socket
    /// would block on its first frame (`EAGAIN`): nothing was sent and the cursor stays. When a
    /// send fails otherwise the cursor still moves past the event, then the error is thrown.
    func send(at cursor: inout Cursor, on socket: ZMQSocket) throws(ZMQError) -> Bool {
        precondition(cursor.event < count, "no event at the cursor")
        // Read once: each use of a variable of this class per frame cost a dynamic
        // exclusivity check.
        let base = UnsafeRawPointer(storage)
        func load(at offset: inout Int) -> UInt32 {
            defer { offset += 4 }
            return base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        }
        var offset = cursor.offset
        var largeIndex = cursor.large
        let frames = Int(load(at: &offset))
        var next = offset
        var nextLarge = largeIndex
        // The end of the record, found first so a failure can still move past the event.
        for _ in 0..<frames {
            let length = load(at: &next)
            if length == Self.byReference { nextLarge += 1 } else { next += Int(length) }
        }
        for index in 0..<frames {
            let length = load(at: &offset)
            let more = index < frames - 1
            let sent: Bool
            do throws(ZMQError) {
                if length == Self.byReference {
                    sent = try socket.sendFrame(large[largeIndex], more: more, dontWait: true)
                    largeIndex += 1
                } else {
                    sent = try socket.send(UnsafeRawBufferPointer(start: base + offset, count: Int(length)), more: more)
                    offset += Int(length)
                }
            } catch {
                cursor = Cursor(offset: next, large: nextLarge, event: cursor.event + 1)
                throw error
            }
            guard sent else {
                // Only the first frame can hit EAGAIN: libzmq queues the rest atomically.
                precondition(index == 0, "EAGAIN in the middle of a multipart message")
                return false
            }
        }
        cursor = Cursor(offset: next, large: nextLarge, event: cursor.event + 1)
        return true
    }

    /// Makes room for `extra` more bytes, doubling the buffer as needed.
    private func reserve(_ extra: Int) {
        let needed = used + extra
        guard needed > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        grown.copyMemory(from: storage, byteCount: used)
        storage.deallocate()
        storage = grown
        capacity = newCapacity
    }

    private func put(_ value: UInt32) {
        storage.storeBytes(of: value, toByteOffset: used, as: UInt32.self)
        used += 4
    }

    /// What a frame takes in the buffer: its length field, and its bytes unless referenced.
    private static func room(_ frame: [UInt8]) -> Int { 4 + (frame.count <= inlineLimit ? frame.count : 0) }

    /// A frame's length and bytes, or for one over ``inlineLimit`` the mark and a reference to
    /// it (room reserved).
    private func putFrame(_ frame: [UInt8]) {
        guard frame.count <= Self.inlineLimit else {
            put(Self.byReference)
            large.append(frame)
            return
        }
        put(UInt32(frame.count))
        frame.withUnsafeBytes { copy($0) }
    }

    private func copy(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        (storage + used).copyMemory(from: base, byteCount: bytes.count)
        used += bytes.count
    }

}
