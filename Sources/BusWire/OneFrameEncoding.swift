import BusSupport
import BusZMQ

/// A request or reply body in the one-frame form (``OneFrameBody``), measured first and then
/// written straight into the memory of the message that carries it: no array of its own and no
/// copy into libzmq's.
package struct OneFrameEncoding: Sendable {
    /// What follows the marker: a request's method (`[u8 n][n bytes]`) or a reply's status
    /// (big-endian u16).
    private enum Head {
        case method(String, count: Int)
        case status(Int)
    }

    private let head: Head
    private let meta: OneFrameBody.Meta
    private let payload: [UInt8]

    /// The frame's size in bytes.
    package let count: Int

    /// Nil when the request does not fit the one-frame form (a method over 255 bytes, a meta
    /// over 65 535): ``RequestBody/encode(oneFrame:binaryMeta:)`` then gives its three frames.
    package init?(_ body: RequestBody, binaryMeta: Bool) {
        self.init(body, binary: binaryMeta ? body.meta.binaryFields() : nil)
    }

    /// A request whose binary meta carries `id` (its meta's own `id` is not read): nil when it
    /// does not fit the one-frame form with binary meta (see ``RequestMeta``'s binary fields).
    package init?(_ body: RequestBody, binaryID id: UInt64) {
        guard let binary = body.meta.binaryFields(id: id) else { return nil }
        self.init(body, binary: binary)
    }

    /// Nil when the reply does not fit the one-frame form (a status outside 100-999, a meta
    /// over 65 535): ``ReplyBody/encode(oneFrame:binaryMeta:)`` then gives its three frames.
    package init?(_ body: ReplyBody, binaryMeta: Bool) {
        self.init(body, binary: binaryMeta ? body.meta.binaryFields() : nil)
    }

    /// A reply whose binary meta carries `id` (its meta's own `id` is not read): nil when it
    /// does not fit the one-frame form with binary meta.
    package init?(_ body: ReplyBody, binaryID id: UInt64) {
        guard let binary = body.meta.binaryFields(id: id) else { return nil }
        self.init(body, binary: binary)
    }

    /// A request with these binary meta fields, or with its meta as JSON (nil fields).
    private init?(_ body: RequestBody, binary: BinaryMeta.Fields?) {
        let methodCount = body.method.utf8.count
        guard methodCount <= 255 else { return nil }
        self.init(
            head: .method(body.method, count: methodCount), headCount: 1 + methodCount,
            meta: binary.map(OneFrameBody.Meta.binary) ?? .bytes(body.meta.json()), payload: body.payload)
    }

    /// A reply with these binary meta fields, or with its meta as JSON (nil fields).
    private init?(_ body: ReplyBody, binary: BinaryMeta.Fields?) {
        guard (100...999).contains(body.status) else { return nil }
        self.init(
            head: .status(body.status), headCount: 2, meta: binary.map(OneFrameBody.Meta.binary) ?? .bytes(body.meta.json()), payload: body.payload)
    }

    private init?(head: Head, headCount: Int, meta: OneFrameBody.Meta, payload: [UInt8]) {
        guard meta.count <= 0xFFFF else { return nil }
        self.head = head
        self.meta = meta
        self.payload = payload
        count = 1 + headCount + 2 + meta.count + payload.count
    }

    /// Writes the frame; `out` is exactly ``count`` bytes.
    package func write(to out: UnsafeMutableRawBufferPointer) {
        precondition(out.count == count)
        var cursor = RawCursor(out)
        cursor.put(OneFrameBody.marker)
        switch head {
        case .method(var method, let count):
            cursor.put(UInt8(count))
            method.withUTF8 { cursor.put($0) }
        case .status(let status):
            cursor.put(bigEndian: UInt16(status))
        }
        cursor.put(bigEndian: UInt16(meta.count))
        switch meta {
        case .binary(let fields): fields.write(to: &cursor)
        case .bytes(let bytes): bytes.withUnsafeBufferPointer { cursor.put($0) }
        }
        payload.withUnsafeBufferPointer { cursor.put($0) }
        precondition(cursor.offset == count)
    }
}

/// A reply body on its way to the worker socket: the one-frame form written straight into its
/// message, or frames.
package enum ReplyEncoding: Sendable {
    case oneFrame(OneFrameEncoding)
    case frames(Frames)
}

extension ReplyBody {
    /// ``encode(answering:from:)`` as a ``ReplyEncoding``: in the form of the request body that
    /// starts at frame `start` of `request`, the one-frame form left to be written into the
    /// message.
    package func encoding(answering request: Frames, from start: Int) -> ReplyEncoding {
        guard OneFrameBody.isOneFrame(request, from: start) else { return .frames(encode()) }
        let parts = RequestBody.oneFrameParts(request[start])
        let binaryMeta = parts.map { BinaryMeta.isBinary(request[start], at: $0.meta) } ?? false
        if let encoding = OneFrameEncoding(self, binaryMeta: binaryMeta) { return .oneFrame(encoding) }
        return .frames(encode(oneFrame: true, binaryMeta: binaryMeta))
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
    /// Sends ``workerReply(client:body:)``'s frames one by one without building the list,
    /// without waiting. False when the socket would block, and then nothing was sent.
    package static func sendWorkerReply(client: [UInt8], body: ReplyEncoding, on socket: ZMQSocket) throws(ZMQError) -> Bool {
        // Only the first frame can hit EAGAIN: libzmq queues the rest atomically.
        guard try socket.sendFrame([], more: true, dontWait: true) else { return false }
        _ = try socket.sendFrame(Self.worker, more: true, dontWait: true)
        _ = try socket.sendFrame(frame(.reply), more: true, dontWait: true)
        _ = try socket.sendFrame(client, more: true, dontWait: true)
        switch body {
        case .oneFrame(let encoding):
            _ = try socket.sendFrame([], more: true, dontWait: true)
            _ = try socket.sendFrame(count: encoding.count, more: false, fill: encoding.write)
        case .frames(let frames):
            _ = try socket.sendFrame([], more: !frames.isEmpty, dontWait: true)
            for (index, frame) in frames.enumerated() {
                _ = try socket.sendFrame(frame, more: index < frames.count - 1, dontWait: true)
            }
        }
        return true
    }
}

extension RequestBody {
    /// A request body in the one-frame form read where it was received: method and meta in
    /// place, only the payload copied out, and the id of its binary meta (nil: its meta is
    /// JSON; a reply to it takes the same form). Nil for any other body, or one that does not
    /// read cleanly: the general ``decode(_:from:)`` then decides (and says what is wrong).
    package static func decodeOneFrame(_ frame: UnsafeRawBufferPointer) -> (body: RequestBody, binaryID: UInt64?)? {
        var texts = Texts()
        return decodeOneFrame(frame, texts: &texts)
    }

    /// The method and caller of the requests read last (``decodeOneFrame(_:texts:)``).
    package struct Texts {
        var method = RecentText()
        var caller = RecentText()
        package init() {}
    }

    /// ``decodeOneFrame(_:)`` that takes the method's and the caller's strings from `texts` while
    /// their bytes are those of the request read before (a worker keeps one for its requests).
    package static func decodeOneFrame(_ frame: UnsafeRawBufferPointer, texts: inout Texts) -> (body: RequestBody, binaryID: UInt64?)? {
        // [marker][u8 n][method][u16 meta length][meta][payload]
        guard frame.count >= 4, frame[0] == OneFrameBody.marker else { return nil }
        let methodEnd = 2 + Int(frame[1])
        guard methodEnd > 2, frame.count >= methodEnd + 2 else { return nil }
        let metaStart = methodEnd + 2
        let metaEnd = metaStart + (Int(frame[methodEnd]) << 8 | Int(frame[methodEnd + 1]))
        guard frame.count >= metaEnd, let method = texts.method.string(UnsafeRawBufferPointer(rebasing: frame[2..<methodEnd])) else {
            return nil
        }
        let metaBytes = UnsafeRawBufferPointer(rebasing: frame[metaStart..<metaEnd])
        var meta = RequestMeta()
        var binaryID: UInt64?
        if metaBytes.first == BinaryMeta.tag {
            // tag, u64 id, u32 timeout_ms (0: none), u8 n, n bytes caller
            guard metaBytes.count >= 14, metaBytes.count == 14 + Int(metaBytes[13]) else { return nil }
            var id: UInt64 = 0
            for i in 1...8 { id = id << 8 | UInt64(metaBytes[i]) }
            var timeout: UInt32 = 0
            for i in 9...12 { timeout = timeout << 8 | UInt32(metaBytes[i]) }
            meta.id = String(id)
            binaryID = id
            meta.timeoutMs = timeout == 0 ? nil : Int(timeout)
            if metaBytes.count > 14 {
                guard let caller = texts.caller.string(UnsafeRawBufferPointer(rebasing: metaBytes[14...])) else { return nil }
                meta.caller = caller
            }
        } else if !metaBytes.isEmpty {
            guard let parsed = RequestMeta.parse(Array(metaBytes)) else { return nil }
            meta = parsed
        }
        return (RequestBody(method: method, meta: meta, payload: Array(frame[metaEnd...])), binaryID)
    }
}
