import BusZMQ

extension ReplyBody {
    /// The status of a reply body without decoding the rest; nil when it is not ours.
    package static func peekStatus(_ body: Frames) -> Int? {
        body.first.flatMap { peekStatus($0) }
    }

    /// The status in a status frame (three ASCII digits), or in a one-frame body (a big-endian
    /// u16 after the marker, 100-999).
    package static func peekStatus(_ first: [UInt8]) -> Int? {
        first.withUnsafeBytes(peekStatus)
    }

    /// ``peekStatus(_:)`` of a first body frame read in place.
    package static func peekStatus(_ first: UnsafeRawBufferPointer) -> Int? {
        if first.first == OneFrameBody.marker {
            guard first.count >= 5 else { return nil }
            let status = Int(first[1]) << 8 | Int(first[2])
            return (100...999).contains(status) ? status : nil
        }
        guard first.count == 3 else { return nil }
        var value = 0
        for byte in first {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}
