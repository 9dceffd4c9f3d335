import BusSupport
import Glibc

/// The `meta` frame of an event, a small fixed binary header (all integers big-endian):
///
/// ```
/// offset size field
/// 0      1    version (1)
/// 1      1    flags: bit0 retained, bit1 replayed, bit2 reset, bit3 snapshot, bit4 provisional,
///             bit5 repeated
/// 2      8    seq        u64, per publisher instance and topic, starts at 1
/// 10     8    timestamp  u64, microseconds since the Unix epoch
/// 18     ...  five short strings, each u8 length + UTF-8 bytes:
///             source, instance, content-type, correlation-id, causation-id
/// ```
/// Readers ignore bytes after the last field they know, so later versions can append.
public struct EventMeta: Equatable, Sendable {
    public static let version: UInt8 = 1
    public static let fixedSize = 18

    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The kernel keeps this message as the topic's current value.
        public static let retained = Flags(rawValue: 1 << 0)
        /// Sent by `busctl replay`, not by the original source.
        public static let replayed = Flags(rawValue: 1 << 1)
        /// Replaces the retained value whatever its sequence number (an explicit reset).
        public static let reset = Flags(rawValue: 1 << 2)
        /// Re-sent by the kernel from its retained store because a subscription matching the
        /// topic arrived (the last-value cache): the current value, not a new change.
        public static let snapshot = Flags(rawValue: 1 << 3)
        /// Published by a service that could not restore its state (neither `persist` nor the
        /// kernel answered): the kernel treats it as any retained value, but `persist` never
        /// lets it replace a saved snapshot that is not provisional (docs/PERSISTENCE.md).
        public static let provisional = Flags(rawValue: 1 << 4)
        /// Re-sent by the kernel, seq unchanged, after it dropped events for a full subscriber
        /// queue: the newest event of a stream, so a subscriber that lost the stream's end sees
        /// the gap. One that already has it drops it as a duplicate (docs/PROTOCOL.md).
        public static let repeated = Flags(rawValue: 1 << 5)
    }

    public var flags: Flags
    public var seq: UInt64
    public var timestampMicros: UInt64
    /// The string fields, in one shared box: consecutive events of a publisher share them, so a
    /// subscriber decodes them once and every copy of an event (into each subscription's batch,
    /// out to its consumer) costs one reference count for them instead of five.
    private(set) var text: Text

    /// The string fields as a value; ``Text`` boxes them.
    struct Strings: Equatable, Sendable {
        var source: String
        var instance: String
        var contentType: String
        var correlationID: String
        var causationID: String
    }

    final class Text: Equatable, Sendable {
        let strings: Strings
        init(_ strings: Strings) { self.strings = strings }
        static func == (a: Text, b: Text) -> Bool { a === b || a.strings == b.strings }
    }

    /// Changes a string field: a new box (others may share this one).
    private mutating func change(_ body: (inout Strings) -> Void) {
        var strings = text.strings
        body(&strings)
        text = Text(strings)
    }

    public var source: String {
        get { text.strings.source }
        set { change { $0.source = newValue } }
    }
    public var instance: String {
        get { text.strings.instance }
        set { change { $0.instance = newValue } }
    }
    public var contentType: String {
        get { text.strings.contentType }
        set { change { $0.contentType = newValue } }
    }
    public var correlationID: String {
        get { text.strings.correlationID }
        set { change { $0.correlationID = newValue } }
    }
    public var causationID: String {
        get { text.strings.causationID }
        set { change { $0.causationID = newValue } }
    }

    public init(
        flags: Flags = [], seq: UInt64, timestampMicros: UInt64, source: String, instance: String,
        contentType: String = "application/json", correlationID: String = "", causationID: String = ""
    ) {
        self.init(
            flags: flags, seq: seq, timestampMicros: timestampMicros,
            text: Text(Strings(source: source, instance: instance, contentType: contentType, correlationID: correlationID, causationID: causationID)))
    }

    init(flags: Flags, seq: UInt64, timestampMicros: UInt64, text: Text) {
        self.flags = flags
        self.seq = seq
        self.timestampMicros = timestampMicros
        self.text = text
    }

    public var isRetained: Bool { flags.contains(.retained) }

    /// Encodes the header. Strings longer than 255 bytes are a programming error upstream
    /// (names are validated) and are cut at 255 bytes.
    public func encode() -> [UInt8] {
        var out: [UInt8] = []
        let tail = Self.encodeTail(
            source: source, instance: instance, contentType: contentType, correlationID: correlationID, causationID: causationID)
        Self.write(flags: flags, seq: seq, timestampMicros: timestampMicros, tail: tail, to: &out)
        return out
    }

    /// The string fields as they follow the fixed header. A publisher's events usually share
    /// them, so it encodes them once and reuses the bytes (``write(flags:seq:timestampMicros:tail:to:)``).
    package static func encodeTail(source: String, instance: String, contentType: String, correlationID: String, causationID: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(source.utf8.count + instance.utf8.count + contentType.utf8.count + correlationID.utf8.count + causationID.utf8.count + 5)
        appendField(source, to: &out)
        appendField(instance, to: &out)
        appendField(contentType, to: &out)
        appendField(correlationID, to: &out)
        appendField(causationID, to: &out)
        return out
    }

    /// Replaces `out` with a whole header: the fixed part, then `tail` (from ``encodeTail``).
    static func write(flags: Flags, seq: UInt64, timestampMicros: UInt64, tail: [UInt8], to out: inout [UInt8]) {
        let count = fixedSize + tail.count
        if out.count != count { out = [UInt8](repeating: 0, count: count) }
        out.withUnsafeMutableBytes { bytes in
            writeFixed(flags: flags, seq: seq, timestampMicros: timestampMicros, to: bytes.baseAddress!)
            tail.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: bytes[fixedSize...]).copyMemory(from: $0) }
        }
    }

    /// Writes the fixed part of a header (``fixedSize`` bytes) at `out`.
    package static func writeFixed(flags: Flags, seq: UInt64, timestampMicros: UInt64, to out: UnsafeMutableRawPointer) {
        out.storeBytes(of: version, as: UInt8.self)
        out.storeBytes(of: flags.rawValue, toByteOffset: 1, as: UInt8.self)
        out.storeBytes(of: seq.bigEndian, toByteOffset: 2, as: UInt64.self)
        out.storeBytes(of: timestampMicros.bigEndian, toByteOffset: 10, as: UInt64.self)
    }

    /// A length byte and at most 255 bytes of `text`, cut on a character boundary (never
    /// before a UTF-8 continuation byte). Copies straight from the string's storage.
    private static func appendField(_ text: String, to out: inout [UInt8]) {
        let utf8 = text.utf8
        guard utf8.count > 255 else {
            out.append(UInt8(utf8.count))
            out.append(contentsOf: utf8)
            return
        }
        let bytes = Array(utf8)
        var end = 255
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        out.append(UInt8(end))
        out.append(contentsOf: bytes[..<end])
    }

    /// Decodes a header. Throws ``BusError/malformed(_:)`` naming what was wrong.
    public static func decode(_ bytes: [UInt8]) throws(BusError) -> EventMeta {
        guard bytes.count >= fixedSize else {
            throw .malformed("event meta is \(bytes.count) bytes, shorter than the \(fixedSize)-byte header")
        }
        guard bytes[0] == version else {
            throw .malformed("event meta version \(bytes[0]) is not supported (this side speaks \(version))")
        }
        var reader = ByteReader(bytes, offset: 2)
        let seq = reader.readUInt64()!
        let time = reader.readUInt64()!
        var strings: [String] = []
        for name in ["source", "instance", "content-type", "correlation-id", "causation-id"] {
            guard let text = reader.readShortString() else {
                throw .malformed("event meta is truncated in its \(name) field")
            }
            strings.append(text)
        }
        return EventMeta(
            flags: Flags(rawValue: bytes[1]), seq: seq, timestampMicros: time, source: strings[0],
            instance: strings[1], contentType: strings[2], correlationID: strings[3], causationID: strings[4])
    }

    /// Remembers the string fields of the last decoded header: consecutive events from one
    /// publisher share them, so decoding reuses them (one box) instead of making new ones.
    public struct DecodeCache {
        var tail: [UInt8] = []
        var text: Text?
        public init() {}
    }

    /// Like ``decode(_:)``, reusing the strings of the previous header when its string fields
    /// are the same bytes.
    public static func decode(_ bytes: [UInt8], cache: inout DecodeCache) throws(BusError) -> EventMeta {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(BusError) in try decode(raw, cache: &cache) } }
        return try result.get()
    }

    /// Like ``decode(_:cache:)`` for bytes still in a receive buffer: copies them only when
    /// the string fields differ from the cached header's.
    package static func decode(_ raw: UnsafeRawBufferPointer, cache: inout DecodeCache) throws(BusError) -> EventMeta {
        guard raw.count > fixedSize, raw[0] == version, let text = cache.text,
            cache.tail.hasSameBytes(as: UnsafeRawBufferPointer(rebasing: raw[fixedSize...]))
        else {
            let meta = try decode(Array(raw))
            cache.tail = Array(raw[fixedSize...])
            cache.text = meta.text
            return meta
        }
        // Version and length were checked above.
        let (flags, seq) = peek(raw.baseAddress!, count: raw.count)!
        var time: UInt64 = 0
        for i in 10..<fixedSize { time = time << 8 | UInt64(raw[i]) }
        return EventMeta(flags: flags, seq: seq, timestampMicros: time, text: text)
    }

    /// Reads only the flags and sequence number, without allocating: the kernel's fast path.
    @inline(__always)
    package static func peek(_ base: UnsafeRawPointer, count: Int) -> (flags: Flags, seq: UInt64)? {
        guard count >= fixedSize, base.load(as: UInt8.self) == version else { return nil }
        let flags = Flags(rawValue: base.load(fromByteOffset: 1, as: UInt8.self))
        var seq: UInt64 = 0
        for i in 0..<8 { seq = seq << 8 | UInt64(base.load(fromByteOffset: 2 + i, as: UInt8.self)) }
        return (flags, seq)
    }
}

struct ByteReader {
    let bytes: [UInt8]
    var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    mutating func readUInt64() -> UInt64? {
        guard offset + 8 <= bytes.count else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[offset + i]) }
        offset += 8
        return v
    }

    mutating func readShortString() -> String? {
        guard offset < bytes.count else { return nil }
        let length = Int(bytes[offset])
        guard offset + 1 + length <= bytes.count else { return nil }
        let text = String(decoding: bytes[(offset + 1)..<(offset + 1 + length)], as: UTF8.self)
        offset += 1 + length
        return text
    }
}
