import Foundation

// Inlinable: called per frame from other modules (see UTF8Text).
extension Array where Element == UInt8 {
    /// True when `other` holds exactly these bytes (a receive buffer compared with a cached copy).
    @inlinable package func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        count == other.count && (isEmpty || withUnsafeBytes { memcmp($0.baseAddress!, other.baseAddress!, count) == 0 })
    }

    @inlinable package mutating func appendBigEndian(_ value: UInt64) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
