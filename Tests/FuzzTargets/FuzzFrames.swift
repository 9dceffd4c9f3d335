import Bus
import BusZMQ

/// How a fuzz input stands for a multi-frame ZeroMQ message: each frame is a 2-byte big-endian
/// length and then that many bytes; a length past the end takes what is left. Every byte string
/// is some message, so the fuzzer's mutations never go to waste on an unreadable layout.
public enum FuzzFrames {
    /// The frames `bytes` stands for.
    public static func split(_ bytes: [UInt8]) -> Frames {
        var frames: Frames = []
        var index = 0
        while index < bytes.count {
            guard index + 1 < bytes.count else {
                frames.append([bytes[index]])
                break
            }
            let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            let start = index + 2
            let end = min(start + length, bytes.count)
            frames.append(Array(bytes[start..<end]))
            index = end
        }
        return frames
    }

    /// The input that ``split(_:)`` turns back into `frames` (each frame under 64 KiB).
    public static func join(_ frames: Frames) -> [UInt8] {
        var bytes: [UInt8] = []
        for frame in frames {
            precondition(frame.count <= 0xFFFF, "a seed frame over 64 KiB")
            bytes.append(UInt8(frame.count >> 8))
            bytes.append(UInt8(frame.count & 0xFF))
            bytes.append(contentsOf: frame)
        }
        return bytes
    }
}
