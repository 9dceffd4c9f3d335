import BusSupport
import BusZMQ

/// A request body in the one-frame form (``OneFrameBody``), measured first and then written
/// straight into the memory of the message that carries it: the caller's request costs no
/// array of its own and no copy into libzmq's.
package struct OneFrameEncoding {
    private let method: String
    private let methodCount: Int
    private let meta: OneFrameBody.Meta
    private let payload: [UInt8]

    /// The frame's size in bytes.
    package let count: Int

    /// Nil when the body does not fit the one-frame form (a method over 255 bytes, a meta over
    /// 65 535): ``RequestBody/encode(oneFrame:binaryMeta:)`` then gives its three frames.
    package init?(_ body: RequestBody, binaryMeta: Bool) {
        methodCount = body.method.utf8.count
        guard methodCount <= 255 else { return nil }
        let binary = binaryMeta ? body.meta.binaryFields() : nil
        meta = binary.map(OneFrameBody.Meta.binary) ?? .bytes(body.meta.json())
        guard meta.count <= 0xFFFF else { return nil }
        method = body.method
        payload = body.payload
        count = 1 + 1 + methodCount + 2 + meta.count + body.payload.count
    }

    /// Writes the frame; `out` is exactly ``count`` bytes.
    package func write(to out: UnsafeMutableRawBufferPointer) {
        precondition(out.count == count)
        var cursor = RawCursor(out)
        cursor.put(OneFrameBody.marker)
        cursor.put(UInt8(methodCount))
        var method = method
        method.withUTF8 { cursor.put($0) }
        cursor.put(UInt8(meta.count >> 8))
        cursor.put(UInt8(meta.count & 0xFF))
        switch meta {
        case .binary(let fields): fields.write(to: &cursor)
        case .bytes(let bytes): bytes.withUnsafeBufferPointer { cursor.put($0) }
        }
        payload.withUnsafeBufferPointer { cursor.put($0) }
        precondition(cursor.offset == count)
    }
}

/// Appends bytes to a raw buffer of a known size.
struct RawCursor {
    let base: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ base: UnsafeMutableRawBufferPointer) { self.base = base }

    @inline(__always)
    mutating func put(_ byte: UInt8) {
        base[offset] = byte
        offset += 1
    }

    @inline(__always)
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        (base.baseAddress! + offset).copyMemory(from: source, byteCount: bytes.count)
        offset += bytes.count
    }

    @inline(__always)
    mutating func put<T: FixedWidthInteger>(bigEndian value: T) {
        withUnsafeBytes(of: value.bigEndian) { put($0.assumingMemoryBound(to: UInt8.self)) }
    }
}

extension BinaryMeta.Fields {
    /// ``write(to:)-(inout [UInt8])`` into a raw buffer.
    func write(to cursor: inout RawCursor) {
        cursor.put(BinaryMeta.tag)
        cursor.put(bigEndian: id)
        cursor.put(bigEndian: value)
        cursor.put(UInt8(count - 14))
        if var text { text.withUTF8 { cursor.put($0) } }
    }
}

extension MDP {
    /// Sends a client request (`[""][MDPC01][service][body]`) whose one-frame body is written
    /// straight into its message, without waiting. False when the socket would block, and then
    /// nothing was sent.
    package static func sendClientRequest(service: String, body: OneFrameEncoding, on socket: ZMQSocket) throws(ZMQError) -> Bool {
        // Only the first frame can hit EAGAIN: libzmq queues the rest atomically.
        guard try socket.sendFrame([], more: true, dontWait: true) else { return false }
        _ = try socket.sendFrame(Self.client, more: true, dontWait: true)
        _ = try socket.send(utf8: service, more: true)
        _ = try socket.sendFrame(count: body.count, more: false, fill: body.write)
        return true
    }
}

extension ReplyBody {
    /// A reply body in the one-frame form with binary meta (what a bus worker sends a bus
    /// caller), read in place from the frame's memory: only the payload is copied out, and
    /// the `from` name comes from `name`, which may hand out a string it made before for the
    /// same bytes. Nil for any other body, or one that does not read cleanly: the general
    /// ``decode(_:from:)`` then decides (and says what is wrong).
    package static func decodeBinaryOneFrame(
        _ frame: UnsafeRawBufferPointer, name: (UnsafeRawBufferPointer) -> String?
    ) -> (body: ReplyBody, id: UInt64)? {
        // [marker][u16 status][u16 meta length][meta: tag, u64 id, u32 elapsed, u8 n, n bytes][payload]
        guard frame.count >= 5 + 14, frame[0] == OneFrameBody.marker else { return nil }
        let status = Int(frame[1]) << 8 | Int(frame[2])
        let metaCount = Int(frame[3]) << 8 | Int(frame[4])
        let metaEnd = 5 + metaCount
        guard (100...999).contains(status), metaCount >= 14, frame.count >= metaEnd, frame[5] == BinaryMeta.tag,
            metaCount == 14 + Int(frame[5 + 13])
        else { return nil }
        var id: UInt64 = 0
        for i in 6..<14 { id = id << 8 | UInt64(frame[i]) }
        var elapsed: UInt32 = 0
        for i in 14..<18 { elapsed = elapsed << 8 | UInt32(frame[i]) }
        var from: String?
        if metaCount > 14 {
            guard let text = name(UnsafeRawBufferPointer(rebasing: frame[(5 + 14)..<metaEnd])) else { return nil }
            from = text
        }
        let meta = ReplyMeta(id: String(id), from: from, elapsedMicros: elapsed == BinaryMeta.noElapsed ? nil : Int(elapsed))
        return (ReplyBody(status: status, meta: meta, payload: Array(frame[metaEnd...])), id)
    }
}

extension MDP {
    private static let replyCommandFrame: [UInt8] = [Command.reply.rawValue]

    /// Sends ``workerReply(client:body:)``'s frames one by one without building the list,
    /// without waiting. False when the socket would block, and then nothing was sent.
    package static func sendWorkerReply(client: [UInt8], body: Frames, on socket: ZMQSocket) throws(ZMQError) -> Bool {
        // Only the first frame can hit EAGAIN: libzmq queues the rest atomically.
        guard try socket.sendFrame([], more: true, dontWait: true) else { return false }
        _ = try socket.sendFrame(Self.worker, more: true, dontWait: true)
        _ = try socket.sendFrame(replyCommandFrame, more: true, dontWait: true)
        _ = try socket.sendFrame(client, more: true, dontWait: true)
        _ = try socket.sendFrame([], more: !body.isEmpty, dontWait: true)
        for (index, frame) in body.enumerated() {
            _ = try socket.sendFrame(frame, more: index < body.count - 1, dontWait: true)
        }
        return true
    }
}
