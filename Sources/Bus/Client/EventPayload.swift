import Foundation

/// The bytes of an event's payload: an immutable view into a buffer shared with other
/// payloads received in the same batch, so receiving an event allocates nothing of its own.
///
/// A collection of `UInt8` (zero-based), readable in place with ``withUnsafeBytes(_:)``, and
/// convertible with `Array(payload)`, `Data(payload)`, `String(decoding: payload, as: UTF8.self)`.
/// Equal payloads have equal bytes, wherever they live.
///
/// What a kept payload keeps alive: a received payload of up to 2 KiB shares a buffer of
/// 16 KiB with the payloads received before and after it, and keeps that whole buffer alive
/// while it lives; a larger one has a buffer of its own. To keep a few small payloads for a
/// long time out of many received, keep ``compacted()`` copies. A payload made from bytes
/// (``init(_:)``, an array literal) has a buffer of its own.
public struct EventPayload: Sendable {
    private let buffer: PayloadBuffer
    private let offset: Int
    /// The number of bytes.
    public let count: Int

    init(buffer: PayloadBuffer, offset: Int, count: Int) {
        self.buffer = buffer
        self.offset = offset
        self.count = count
    }

    /// A payload with a buffer of its own holding a copy of `bytes`.
    init(copying bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else {
            self.init(buffer: .empty, offset: 0, count: 0)
            return
        }
        let own = PayloadBuffer(capacity: bytes.count)
        own.base.copyMemory(from: source, byteCount: bytes.count)
        self.init(buffer: own, offset: 0, count: bytes.count)
    }

    /// A payload holding a copy of `bytes`.
    public init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { EventPayload(copying: $0) }
    }

    /// A payload holding a copy of `bytes`.
    public init(_ bytes: some Sequence<UInt8>) {
        if let made = bytes.withContiguousStorageIfAvailable({ EventPayload(copying: UnsafeRawBufferPointer($0)) }) {
            self = made
        } else {
            self.init(Array(bytes))
        }
    }

    /// No bytes.
    public init() {
        self.init(buffer: .empty, offset: 0, count: 0)
    }

    /// Calls `body` with the bytes in place; the pointer is valid only during the call.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withExtendedLifetime(self) { () throws(E) -> R in try body(rawBytes) }
    }

    /// The bytes, valid while `buffer` lives.
    private var rawBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: buffer.base + offset, count: count)
    }

    /// The bytes in `range` (positions from 0) as a payload of their own, sharing this one's
    /// buffer (no copy).
    public func extracting(_ range: Range<Int>) -> EventPayload {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range \(range) is outside a payload of \(count) bytes")
        return EventPayload(buffer: buffer, offset: offset + range.lowerBound, count: range.count)
    }

    /// A copy in a buffer of its own, exactly its size: what to keep of a received event for
    /// long, so that it does not keep the buffer it shares with other payloads alive.
    public func compacted() -> EventPayload {
        withUnsafeBytes { EventPayload(copying: $0) }
    }

    /// The bytes as an array (a copy).
    public var bytes: [UInt8] { Array(self) }

    /// The bytes as `Data` (a copy).
    public var data: Data { withUnsafeBytes { Data($0) } }

    /// Decodes the payload as JSON, reading the bytes in place.
    func decodeJSON<T: Decodable>(_ type: T.Type, with decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try withUnsafeBytes { bytes throws -> T in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return try decoder.decode(T.self, from: Data()) }
            // Not copied and not freed: the Data does not outlive the call.
            let view = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
            return try decoder.decode(T.self, from: view)
        }
    }
}

extension EventPayload: RandomAccessCollection {
    public typealias Index = Int
    public typealias Indices = Range<Int>

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public var isEmpty: Bool { count == 0 }

    public subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < count, "index \(position) is outside a payload of \(count) bytes")
        return withUnsafeBytes { $0[position] }
    }

    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        try withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
    }
}

extension EventPayload: Equatable, Hashable {
    public static func == (lhs: EventPayload, rhs: EventPayload) -> Bool {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in equal(l, r) } }
    }

    /// True when `lhs` holds exactly the bytes of `rhs`.
    public static func == (lhs: EventPayload, rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in equal(l, r) } }
    }

    /// True when `lhs` holds exactly the bytes of `rhs`.
    public static func == (lhs: [UInt8], rhs: EventPayload) -> Bool { rhs == lhs }

    /// True when `lhs` does not hold exactly the bytes of `rhs`.
    public static func != (lhs: EventPayload, rhs: [UInt8]) -> Bool { !(lhs == rhs) }

    /// True when `lhs` does not hold exactly the bytes of `rhs`.
    public static func != (lhs: [UInt8], rhs: EventPayload) -> Bool { !(rhs == lhs) }

    private static func equal(_ l: UnsafeRawBufferPointer, _ r: UnsafeRawBufferPointer) -> Bool {
        guard l.count == r.count else { return false }
        guard let a = l.baseAddress, let b = r.baseAddress, l.count > 0 else { return true }
        return memcmp(a, b, l.count) == 0
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

extension EventPayload: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: UInt8...) {
        self.init(elements)
    }
}

extension EventPayload: CustomStringConvertible {
    /// Its size, never its bytes (payloads are not logged).
    public var description: String { "\(count) bytes" }
}
