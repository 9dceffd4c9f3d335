/// Bytes that event payloads point into.
///
/// Written only by the code that makes it, and only at offsets no ``EventPayload`` refers to
/// yet: a range is written once, before the payload over it exists, and never again.
/// Unchecked `Sendable` for that reason: every byte a payload can read is immutable once the
/// payload is handed out, and the buffer lives while any payload refers to it.
final class PayloadBuffer: @unchecked Sendable {
    /// The first byte, valid while the buffer lives.
    let base: UnsafeMutableRawPointer
    /// Bytes the buffer holds.
    let byteCapacity: Int

    /// A buffer of `capacity` bytes, not initialised.
    init(capacity: Int) {
        byteCapacity = capacity
        base = .allocate(byteCount: max(1, capacity), alignment: 8)
    }

    deinit { base.deallocate() }

    /// The one empty buffer every empty payload made from bytes shares.
    static let empty = PayloadBuffer(capacity: 0)
}
