import Foundation

extension Array where Element == UInt8 {
    /// True when `other` holds exactly these bytes (a receive buffer compared with a cached copy).
    package func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        count == other.count && (isEmpty || withUnsafeBytes { memcmp($0.baseAddress!, other.baseAddress!, count) == 0 })
    }

    package mutating func appendBigEndian(_ value: UInt64) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
