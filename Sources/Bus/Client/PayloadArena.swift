/// Where the subscriber's I/O thread copies received payloads: back to back into shared
/// buffers of ``chunkSize`` bytes, so that an event costs no allocation of its own (a payload
/// of its own array was an allocation and a free per event, a tenth of a subscriber thread).
///
/// A payload over ``ownBufferAbove`` bytes gets a buffer of its own, exactly its size. A kept
/// event therefore keeps alive at most ``chunkSize`` bytes beyond its own payload's, plus the
/// other payloads of its buffer (``EventPayload/compacted()`` copies one out). Thread-confined
/// like the socket it serves.
struct PayloadArena {
    /// The size of a shared buffer.
    static let chunkSize = 16 * 1024
    /// Payloads larger than this are not packed into a shared buffer.
    static let ownBufferAbove = 2 * 1024

    private var buffer: PayloadBuffer?
    private var used = 0

    /// A payload holding a copy of `bytes`. Only bytes past every payload already made are
    /// written, so payloads already handed out never see a write.
    mutating func copy(_ bytes: UnsafeRawBufferPointer) -> EventPayload {
        let count = bytes.count
        if count > Self.ownBufferAbove { return EventPayload(copying: bytes) }
        let target: PayloadBuffer
        if let buffer, buffer.byteCapacity - used >= count {
            target = buffer
        } else {
            target = PayloadBuffer(capacity: Self.chunkSize)
            buffer = target
            used = 0
        }
        let offset = used
        if let source = bytes.baseAddress, count > 0 {
            (target.base + offset).copyMemory(from: source, byteCount: count)
        }
        used += count
        return EventPayload(buffer: target, offset: offset, count: count)
    }
}
