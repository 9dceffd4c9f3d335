/// Strings from wire bytes that must be valid UTF-8. Inlinable: the wire, kernel and client
/// modules call it per frame, and optimization does not inline `package` code across modules.
package enum UTF8Text {
    /// The text of `bytes`, or nil when they are not valid UTF-8. ASCII, by far the common case
    /// for names, topics and meta, skips `String(validating:)`, whose generic code looked up type
    /// metadata on every call and showed in the request path's profile.
    @inlinable @inline(__always)
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        isValid(bytes) ? String(decoding: bytes, as: UTF8.self) : nil
    }

    /// True when `bytes` is UTF-8 (ASCII without making a string).
    @inlinable @inline(__always)
    package static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte >= 0x80 {
            return String(validating: bytes, as: UTF8.self) != nil
        }
        return true
    }

    @inlinable @inline(__always)
    package static func string(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer { string($0) }
    }
}

/// The text of the bytes read last, handed out again while the same bytes repeat: a name read
/// from every message (a method, a caller, a worker instance) is nearly always the one before,
/// and comparing bytes costs less than validating them and making the string.
package struct RecentText {
    private var bytes: [UInt8] = []
    private var text = ""

    package init() {}

    /// The text of `bytes`, or nil when they are not valid UTF-8.
    package mutating func string(_ bytes: UnsafeRawBufferPointer) -> String? {
        if self.bytes.hasSameBytes(as: bytes) { return text }
        guard let made = UTF8Text.string(bytes.assumingMemoryBound(to: UInt8.self)) else { return nil }
        self.bytes = Array(bytes)
        text = made
        return made
    }
}
