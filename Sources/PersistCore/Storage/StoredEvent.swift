import Bus

/// How a stored event reached `persist`.
public enum EventOrigin: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// A live retained event from the subscription.
    case live = 0
    /// The kernel's last-value cache re-sent it when the subscription landed.
    case snapshot = 1
    /// Read from the kernel's retained store at start (`bus.retained`), to catch up on what was
    /// published while `persist` was down.
    case catchUp = 2
    /// Re-fetched from the kernel's retained store after a gap in sequence numbers.
    case healed = 3

    public var description: String {
        switch self {
        case .live: return "live"
        case .snapshot: return "snapshot"
        case .catchUp: return "catch_up"
        case .healed: return "healed"
        }
    }
}

extension EventMeta.Flags {
    /// Flags as stored: how the event was delivered (`snapshot`) is not part of the event.
    var storable: EventMeta.Flags { subtracting([.snapshot, .repeated]) }
}

/// One retained event as stored: the topic, the event's meta fields, the payload, when and how
/// it was stored, and a checksum over all of it (SQLite checks its page structure, not the
/// bytes of a value: a flipped bit inside a payload is only caught by this checksum).
public struct StoredEvent: Sendable, Equatable {
    /// The row id: a per-database increasing number, the paging cursor of `history`.
    public var id: Int64
    public var topic: String
    public var meta: EventMeta
    public var payload: [UInt8]
    /// When `persist` received it (microseconds since the Unix epoch).
    public var storedMicros: UInt64
    public var origin: EventOrigin

    /// A retained value (from the kernel) or an event (from the bus) as received now.
    public init(received topic: String, meta: EventMeta, payload: [UInt8], origin: EventOrigin) {
        self.init(topic: topic, meta: meta, payload: payload, storedMicros: WallClock.microsNow(), origin: origin)
    }

    public init(_ value: RetainedValue, origin: EventOrigin) {
        self.init(received: value.topic, meta: value.meta, payload: value.payload, origin: origin)
    }

    public init(id: Int64 = 0, topic: String, meta: EventMeta, payload: [UInt8], storedMicros: UInt64, origin: EventOrigin) {
        self.id = id
        self.topic = topic
        var meta = meta
        meta.flags = meta.flags.storable
        self.meta = meta
        self.payload = payload
        self.storedMicros = storedMicros
        self.origin = origin
    }

    /// FNV-1a (64 bits) over every stored field, each length-prefixed. A change of any single
    /// byte always changes the result (every step of FNV-1a is a bijection of the state).
    public var checksum: Int64 {
        var hash = Checksum()
        hash.add(topic)
        hash.add(meta.seq)
        hash.add(meta.timestampMicros)
        hash.add(UInt64(meta.flags.rawValue))
        hash.add(meta.source)
        hash.add(meta.instance)
        hash.add(meta.contentType)
        hash.add(meta.correlationID)
        hash.add(meta.causationID)
        hash.add(payload)
        hash.add(storedMicros)
        hash.add(UInt64(origin.rawValue))
        return Int64(bitPattern: hash.value)
    }

    /// The size counted in `stats`: the payload bytes.
    public var size: Int { payload.count }
}

/// FNV-1a, 64 bits.
struct Checksum {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    private static let prime: UInt64 = 0x0000_0100_0000_01b3

    mutating func add(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* Self.prime
    }

    mutating func add(_ number: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { add(byte: UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
    }

    mutating func add(_ bytes: [UInt8]) {
        add(UInt64(bytes.count))
        for byte in bytes { add(byte: byte) }
    }

    mutating func add(_ text: String) {
        add(UInt64(text.utf8.count))
        for byte in text.utf8 { add(byte: byte) }
    }
}
