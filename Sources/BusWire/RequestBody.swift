import BusSupport
import BusZMQ
import Foundation

/// Request meta: a JSON object, the second part of a request body. Every field is optional
/// on the wire; an empty frame means `{}`.
public struct RequestMeta: Codable, Equatable, Sendable {
    /// Request id, echoed in the reply so a client can match replies to requests.
    public var id: String?
    /// How long the caller waits, in milliseconds; the kernel holds a request for a service
    /// with no worker at most this long (or its grace period) before answering 503.
    public var timeoutMs: Int?
    public var traceID: String?
    public var correlationID: String?
    /// The calling service, for stats and the graph (informational, not an identity).
    public var caller: String?

    public init(id: String? = nil, timeoutMs: Int? = nil, traceID: String? = nil, correlationID: String? = nil, caller: String? = nil) {
        self.id = id
        self.timeoutMs = timeoutMs
        self.traceID = traceID
        self.correlationID = correlationID
        self.caller = caller
    }

    enum CodingKeys: String, CodingKey {
        case id, caller
        case timeoutMs = "timeout_ms"
        case traceID = "trace_id"
        case correlationID = "correlation_id"
    }

    /// Lenient: a field of the wrong type is ignored, not fatal to the whole meta, so one bad
    /// field does not cost the request its id or deadline.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try? c.decodeIfPresent(String.self, forKey: .id)
        timeoutMs = try? c.decodeIfPresent(Int.self, forKey: .timeoutMs)
        traceID = try? c.decodeIfPresent(String.self, forKey: .traceID)
        correlationID = try? c.decodeIfPresent(String.self, forKey: .correlationID)
        caller = try? c.decodeIfPresent(String.self, forKey: .caller)
    }
}

/// The body of a request inside MDP: `[method][meta][payload]`, or those three in one frame
/// (``OneFrameBody``).
public struct RequestBody: Equatable, Sendable {
    public var method: String
    public var meta: RequestMeta
    public var payload: [UInt8]

    public init(method: String, meta: RequestMeta = RequestMeta(), payload: [UInt8] = []) {
        self.method = method
        self.meta = meta
        self.payload = payload
    }

    /// The body's frames: `[method][meta][payload]`, or with `oneFrame` the one-frame form
    /// (``OneFrameBody``) when the method fits in 255 bytes and the meta in 65 535. With
    /// `binaryMeta` too, a one-frame body carries its meta as ``BinaryMeta`` when the meta has
    /// only what that holds (a decimal id, a timeout, a caller).
    public func encode(oneFrame: Bool = false, binaryMeta: Bool = false) -> Frames {
        let methodCount = method.utf8.count
        let binary = oneFrame && binaryMeta && methodCount <= 255 ? meta.binaryFields() : nil
        let metaOut = binary.map(OneFrameBody.Meta.binary) ?? .bytes(meta.json())
        guard oneFrame, methodCount <= 255, metaOut.count <= 0xFFFF else { return [Array(method.utf8), metaOut.bytes, payload] }
        let frame = OneFrameBody.pack(headCount: 1 + methodCount, meta: metaOut, payload: payload) { head in
            head.append(UInt8(methodCount))
            head.append(contentsOf: method.utf8)
        }
        return [frame]
    }

    /// The parts of a one-frame request body, as ranges of `frame`; nil when it is truncated.
    static func oneFrameParts(_ frame: [UInt8]) -> (method: Range<Int>, meta: Range<Int>, payload: Range<Int>)? {
        frame.withUnsafeBytes(oneFrameParts)
    }

    /// ``oneFrameParts(_:)`` of a frame read in place.
    static func oneFrameParts(_ frame: UnsafeRawBufferPointer) -> (method: Range<Int>, meta: Range<Int>, payload: Range<Int>)? {
        guard frame.count >= 2, frame[0] == OneFrameBody.marker else { return nil }
        let methodEnd = 2 + Int(frame[1])
        guard let rest = OneFrameBody.split(frame, headEnd: methodEnd) else { return nil }
        return (2..<methodEnd, rest.meta, rest.payload)
    }

    /// A request body whose meta is ``BinaryMeta``, with that meta as JSON instead (for a
    /// worker that did not say it reads binary meta), in the same form; nil when its meta is
    /// not binary (or cannot be read: the kernel refuses such a request before it gets here).
    package static func withJSONMeta(_ body: Frames) -> Frames? {
        if OneFrameBody.isOneFrame(body) {
            let frame = body[0]
            guard let parts = oneFrameParts(frame), BinaryMeta.isBinary(frame, at: parts.meta),
                let meta = RequestMeta.parse(frame[parts.meta])
            else { return nil }
            let json = meta.json()
            return [
                OneFrameBody.pack(headCount: parts.method.count + 1, meta: json, payload: Array(frame[parts.payload])) { head in
                    head.append(contentsOf: frame[1..<parts.method.upperBound])
                }
            ]
        }
        guard body.count > 1, BinaryMeta.isBinary(body[1], at: body[1].indices), let meta = RequestMeta.parse(body[1]) else { return nil }
        var frames = body
        frames[1] = meta.json()
        return frames
    }

    /// What is wrong with a request body's binary meta; nil when its meta is JSON, missing, or
    /// good binary meta. The kernel checks this before it queues a request, so a worker never
    /// gets binary meta it cannot read, nor a conversion that lost the caller's fields.
    package static func binaryMetaProblem(_ body: Frames) -> String? {
        guard let meta = metaBytes(body), meta.first == BinaryMeta.tag else { return nil }
        return BinaryMeta.problem(meta, of: "request", text: "caller")
    }

    /// ``binaryMetaProblem(_:)`` of a one-frame body, `frame` (the body's only frame), read in
    /// place.
    package static func binaryMetaProblem(frame: UnsafeRawBufferPointer) -> String? {
        guard let meta = oneFrameMeta(frame), meta.first == BinaryMeta.tag else { return nil }
        return BinaryMeta.problem(meta, of: "request", text: "caller")
    }

    /// The meta part of a body whose only frame is `frame`, when that is a one-frame body (nil
    /// when it is not one, or truncated).
    private static func oneFrameMeta(_ frame: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        oneFrameParts(frame).map { UnsafeRawBufferPointer(rebasing: frame[$0.meta]) }
    }

    /// The meta part of a request body in either form (nil when there is none, or the one-frame
    /// body is truncated).
    private static func metaBytes(_ body: Frames) -> ArraySlice<UInt8>? {
        if OneFrameBody.isOneFrame(body) {
            guard let parts = oneFrameParts(body[0]) else { return nil }
            return body[0][parts.meta]
        }
        return body.count > 1 ? body[1][...] : nil
    }

    /// The `timeout_ms` of a request body's meta (either meta form), without decoding the rest
    /// of binary meta: the kernel asks for every request that has to wait.
    package static func peekTimeoutMs(_ body: Frames) -> Int? {
        guard let meta = metaBytes(body), meta.first == BinaryMeta.tag else { return peekMeta(body)?.timeoutMs }
        return meta.withUnsafeBytes(BinaryMeta.timeoutMs)
    }

    /// ``peekTimeoutMs(_:)`` of a body whose only frame is `frame`, read in place when its
    /// meta is binary; nil when its meta is not (JSON meta is read from frames instead).
    package static func peekBinaryTimeoutMs(frame: UnsafeRawBufferPointer) -> Int?? {
        guard let meta = oneFrameMeta(frame), meta.first == BinaryMeta.tag else { return nil }
        return .some(BinaryMeta.timeoutMs(meta))
    }

    /// A one-frame request body as the three frames `[method][meta][payload]` (for a worker
    /// that did not say it reads the one-frame form); nil when `body` is not one, or truncated.
    package static func threeFrames(_ body: Frames) -> Frames? {
        guard OneFrameBody.isOneFrame(body), let parts = oneFrameParts(body[0]) else { return nil }
        let frame = body[0]
        return [Array(frame[parts.method]), Array(frame[parts.meta]), Array(frame[parts.payload])]
    }

    /// The method of a request body in either form, without decoding the rest ("" when there
    /// is none).
    package static func peekMethod(_ frames: Frames, from start: Int) -> String {
        guard start < frames.count else { return "" }
        let first = frames[start]
        if OneFrameBody.isOneFrame(frames, from: start) {
            guard let parts = oneFrameParts(first) else { return "" }
            return String(decoding: first[parts.method], as: UTF8.self)
        }
        return String(decoding: first, as: UTF8.self)
    }

    /// Decodes `[method][meta][payload]` (`meta` and `payload` may be missing or empty), or the
    /// one-frame form.
    public static func decode(_ frames: Frames) throws(BusError) -> RequestBody {
        try decode(frames, from: 0)
    }

    /// Decodes the body that starts at frame `start` of a whole message (no copy of the frames
    /// after the MDP header).
    package static func decode(_ frames: Frames, from start: Int) throws(BusError) -> RequestBody {
        if OneFrameBody.isOneFrame(frames, from: start) {
            let frame = frames[start]
            guard let parts = oneFrameParts(frame) else {
                throw .malformed("one-frame request body is truncated (its lengths run past its \(frame.count) bytes)")
            }
            // Method and meta are read in place; only the payload becomes an array of its own.
            return try decode(method: frame[parts.method], meta: frame[parts.meta], payload: Array(frame[parts.payload]))
        }
        return try decode(
            method: start < frames.count ? frames[start][...] : [], meta: frames.count > start + 1 ? frames[start + 1][...] : [],
            payload: frames.count > start + 2 ? frames[start + 2] : [])
    }

    private static func decode(
        method methodBytes: ArraySlice<UInt8>, meta metaBytes: ArraySlice<UInt8>, payload: [UInt8]
    ) throws(BusError)
        -> RequestBody
    {
        guard !methodBytes.isEmpty else {
            throw .malformed("request body has no method frame")
        }
        guard let method = methodBytes.withUnsafeBufferPointer(UTF8Text.string) else {
            throw .malformed("method name is not UTF-8")
        }
        var meta = RequestMeta()
        if !metaBytes.isEmpty {
            guard let parsed = RequestMeta.parse(metaBytes) else {
                throw .malformed(BinaryMeta.problem(metaBytes, of: "request", text: "caller") ?? "request meta is not a JSON object")
            }
            meta = parsed
        }
        return RequestBody(method: method, meta: meta, payload: payload)
    }

    /// Reads only the meta of an otherwise opaque body (either form), for the kernel
    /// (deadline, id).
    package static func peekMeta(_ body: Frames) -> RequestMeta? {
        guard let meta = metaBytes(body), let first = meta.first, first == UInt8(ascii: "{") || first == BinaryMeta.tag else { return nil }
        return RequestMeta.parse(meta)
    }
}

/// Reply meta: a JSON object, the second part of a reply body.
public struct ReplyMeta: Codable, Equatable, Sendable {
    /// The id of the request this answers.
    public var id: String?
    /// Which side produced the reply: the service instance, or `"kernel"`.
    public var from: String?
    /// Handling time in microseconds, as measured by the worker.
    public var elapsedMicros: Int?

    public init(id: String? = nil, from: String? = nil, elapsedMicros: Int? = nil) {
        self.id = id
        self.from = from
        self.elapsedMicros = elapsedMicros
    }

    enum CodingKeys: String, CodingKey {
        case id, from
        case elapsedMicros = "elapsed_us"
    }
}

/// The structured error carried as the payload of a non-2xx reply.
public struct ErrorBody: Codable, Equatable, Sendable, Error {
    /// Machine-readable code, e.g. `no_such_service`, `no_such_method`, `invalid_json`.
    public var code: String
    /// One line a person can act on.
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

/// The body of a reply inside MDP: `[status][meta][payload]`, status as ASCII digits, or those
/// three in one frame (``OneFrameBody``).
public struct ReplyBody: Equatable, Sendable {
    public var status: Int
    public var meta: ReplyMeta
    public var payload: [UInt8]

    public init(status: Int, meta: ReplyMeta = ReplyMeta(), payload: [UInt8] = []) {
        self.status = status
        self.meta = meta
        self.payload = payload
    }

    /// An error reply with a structured error payload.
    public static func error(_ status: Int, code: String, message: String, id: String?, from: String) -> ReplyBody {
        let payload = (try? JSONEncoder.bus.encode(ErrorBody(code: code, message: message))).map(Array.init) ?? []
        return ReplyBody(status: status, meta: ReplyMeta(id: id, from: from), payload: payload)
    }

    /// The body's frames: `[status][meta][payload]`, or with `oneFrame` the one-frame form
    /// (``OneFrameBody``) when the meta fits in 65 535 bytes. With `binaryMeta` too, a
    /// one-frame body carries its meta as ``BinaryMeta`` when the meta has a decimal id.
    public func encode(oneFrame: Bool = false, binaryMeta: Bool = false) -> Frames {
        let binary = oneFrame && binaryMeta ? meta.binaryFields() : nil
        let metaOut = binary.map(OneFrameBody.Meta.binary) ?? .bytes(meta.json())
        guard oneFrame, metaOut.count <= 0xFFFF, (100...999).contains(status) else {
            return [status == 200 ? Self.okFrame : Array(String(status).utf8), metaOut.bytes, payload]
        }
        let frame = OneFrameBody.pack(headCount: 2, meta: metaOut, payload: payload) { head in
            head.append(UInt8(status >> 8))
            head.append(UInt8(status & 0xFF))
        }
        return [frame]
    }

    /// The body's frames in the form of `request`, the request body it answers (one frame or
    /// three, binary meta or JSON).
    package func encode(answering request: Frames) -> Frames {
        encode(answering: request, from: 0)
    }

    /// The body's frames in the form of the request body that starts at frame `start` of a
    /// whole message.
    package func encode(answering request: Frames, from start: Int) -> Frames {
        guard OneFrameBody.isOneFrame(request, from: start) else { return encode() }
        let parts = RequestBody.oneFrameParts(request[start])
        return encode(oneFrame: true, binaryMeta: parts.map { BinaryMeta.isBinary(request[start], at: $0.meta) } ?? false)
    }

    private static let okFrame: [UInt8] = Array("200".utf8)

    /// True when the reply body that starts at frame `start` of a whole message is one frame
    /// with binary meta.
    package static func hasBinaryMeta(_ frames: Frames, from start: Int) -> Bool {
        guard OneFrameBody.isOneFrame(frames, from: start), let parts = OneFrameBody.split(frames[start], headEnd: 3) else { return false }
        return BinaryMeta.isBinary(frames[start], at: parts.meta)
    }

    public static func decode(_ frames: Frames) throws(BusError) -> ReplyBody {
        try decode(frames, from: 0)
    }

    /// Decodes the body that starts at frame `start` of a whole message (no copy of the frames
    /// after the MDP header).
    package static func decode(_ frames: Frames, from start: Int) throws(BusError) -> ReplyBody {
        if OneFrameBody.isOneFrame(frames, from: start) {
            let frame = frames[start]
            guard let status = peekStatus(frame), let parts = OneFrameBody.split(frame, headEnd: 3) else {
                throw .malformed("one-frame reply body is truncated or its status is not 100-999")
            }
            // The meta is read in place; only the payload becomes an array of its own.
            return try decode(status: status, meta: frame[parts.meta], payload: Array(frame[parts.payload]))
        }
        guard start < frames.count, let status = peekStatus(frames[start]) else {
            throw .malformed("reply body does not start with a 3-digit status frame")
        }
        return try decode(
            status: status, meta: frames.count > start + 1 ? frames[start + 1][...] : [],
            payload: frames.count > start + 2 ? frames[start + 2] : [])
    }

    private static func decode(status: Int, meta metaBytes: ArraySlice<UInt8>, payload: [UInt8]) throws(BusError) -> ReplyBody {
        var meta = ReplyMeta()
        if !metaBytes.isEmpty {
            guard let parsed = ReplyMeta.parse(metaBytes) else {
                throw .malformed(BinaryMeta.problem(metaBytes, of: "reply", text: "from") ?? "reply meta is not a JSON object")
            }
            meta = parsed
        }
        return ReplyBody(status: status, meta: meta, payload: payload)
    }

    /// The structured error of a non-2xx reply (a generic one if the payload is not one).
    public var errorBody: ErrorBody {
        if let body = try? JSONDecoder().decode(ErrorBody.self, from: Data(payload)) { return body }
        return ErrorBody(code: Status.code(for: status), message: String(decoding: payload.prefix(200), as: UTF8.self))
    }
}

/// The one-frame form of request and reply bodies (docs/PROTOCOL.md, "One-frame bodies"): the
/// three body frames packed into one behind a marker byte, `0xB5`, which starts no method name
/// (it is not a first byte of UTF-8) and no status (not an ASCII digit). Every frame costs each
/// hop of a request (libzmq's pipes, encoders and decoders, a buffer on either side): the bus
/// client sends its requests in this form, and a worker that says so in its READY metadata
/// (`"one_frame": true`) gets them as they are and answers in the form of each request. The
/// kernel hands any other worker the three frames, and answers every request in its own form.
enum OneFrameBody {
    static let marker: UInt8 = 0xB5

    /// True when `body` (the frames after the MDP header) is in the one-frame form.
    static func isOneFrame(_ body: Frames) -> Bool {
        body.count == 1 && body[0].first == marker
    }

    /// True when the body that starts at frame `start` of a whole message is in the one-frame form.
    static func isOneFrame(_ frames: Frames, from start: Int) -> Bool {
        frames.count == start + 1 && frames[start].first == marker
    }

    /// `[marker][head][u16 meta length][meta][payload]`; `head` writes its `headCount` bytes.
    static func pack(headCount: Int, meta: [UInt8], payload: [UInt8], head: (inout [UInt8]) -> Void) -> [UInt8] {
        pack(headCount: headCount, meta: .bytes(meta), payload: payload, head: head)
    }

    /// A body's meta on its way into a frame: binary meta is written from its fields, with no
    /// array of its own.
    enum Meta {
        case binary(BinaryMeta.Fields)
        case bytes([UInt8])

        var count: Int {
            switch self {
            case .binary(let fields): fields.count
            case .bytes(let bytes): bytes.count
            }
        }

        /// The meta as a frame of its own (the three-frame form).
        var bytes: [UInt8] {
            switch self {
            case .binary(let fields): fields.bytes
            case .bytes(let bytes): bytes
            }
        }

        func write(to out: inout [UInt8]) {
            switch self {
            case .binary(let fields): fields.write(to: &out)
            case .bytes(let bytes): out.append(contentsOf: bytes)
            }
        }
    }

    /// The same, the meta (at most 65 535 bytes) written straight into the frame.
    static func pack(headCount: Int, meta: Meta, payload: [UInt8], head: (inout [UInt8]) -> Void) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(3 + headCount + meta.count + payload.count)
        frame.append(marker)
        head(&frame)
        frame.append(UInt8(meta.count >> 8))
        frame.append(UInt8(meta.count & 0xFF))
        meta.write(to: &frame)
        frame.append(contentsOf: payload)
        return frame
    }

    /// The meta and payload of a one-frame body whose head ends at byte `headEnd`, as ranges of
    /// `frame`; nil when its lengths run past its end.
    static func split(_ frame: [UInt8], headEnd: Int) -> (meta: Range<Int>, payload: Range<Int>)? {
        frame.withUnsafeBytes { split($0, headEnd: headEnd) }
    }

    /// ``split(_:headEnd:)`` of a frame read in place.
    static func split(_ frame: UnsafeRawBufferPointer, headEnd: Int) -> (meta: Range<Int>, payload: Range<Int>)? {
        guard frame.count >= headEnd + 2 else { return nil }
        let metaEnd = headEnd + 2 + (Int(frame[headEnd]) << 8 | Int(frame[headEnd + 1]))
        guard frame.count >= metaEnd else { return nil }
        return ((headEnd + 2)..<metaEnd, metaEnd..<frame.count)
    }
}

/// Binary meta (docs/PROTOCOL.md, "Binary meta"): the fields every request and reply carries,
/// at fixed offsets, so that no process writes or parses JSON per request. It is the meta part
/// of a one-frame body, told from JSON by its first byte (`0x01`; JSON meta starts with `{`):
///
///     request: 0x01, u64 id, u32 timeout_ms (0: none),          u8 n, n bytes caller (0: none)
///     reply:   0x01, u64 id, u32 elapsed_us (0xFFFFFFFF: none), u8 n, n bytes from (0: none)
///
/// Big-endian. The id is the JSON meta's `"id"` as a number: `"42"` is 42. Swift clients send it
/// when a request's meta has nothing else; a worker that says `"binary_meta": true` in its READY
/// metadata gets it as it is and answers in kind, any other gets the meta as JSON (the kernel
/// converts it).
package enum BinaryMeta {
    static let tag: UInt8 = 0x01
    static let noElapsed = UInt32.max

    /// True when the meta at `range` of `frame` is binary meta (by its first byte).
    static func isBinary(_ frame: [UInt8], at range: Range<Int>) -> Bool {
        !range.isEmpty && frame[range.lowerBound] == tag
    }

    /// The number a decimal id names: "0" or digits without a leading zero that fit in 64 bits.
    package static func number(_ id: String) -> UInt64? {
        var id = id
        return id.withUTF8 { bytes -> UInt64? in
            guard !bytes.isEmpty, bytes.count <= 20, bytes[0] != UInt8(ascii: "0") || bytes.count == 1 else { return nil }
            var value: UInt64 = 0
            for byte in bytes {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - 0x30))
                guard !o1, !o2 else { return nil }
                value = sum
            }
            return value
        }
    }

    /// What binary meta holds, to be written as `[tag][u64 id][u32 value][u8 n][text]`.
    struct Fields {
        let id: UInt64
        let value: UInt32
        let text: String?
        private let textCount: Int

        /// Nil when `text` is over 255 bytes.
        init?(id: UInt64, value: UInt32, text: String?) {
            textCount = text?.utf8.count ?? 0
            guard textCount <= 255 else { return nil }
            self.id = id
            self.value = value
            self.text = text
        }

        /// The bytes ``write(to:)`` appends.
        var count: Int { 14 + textCount }

        /// The binary meta as an array of its own.
        var bytes: [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(count)
            write(to: &out)
            return out
        }

        func write(to out: inout [UInt8]) {
            out.append(tag)
            withUnsafeBytes(of: id.bigEndian) { out.append(contentsOf: $0) }
            withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
            out.append(UInt8(textCount))
            if let text { out.append(contentsOf: text.utf8) }
        }
    }

    /// `(id, value, text)` of binary meta; nil when its length is not 14 + its text's, or its
    /// text is not UTF-8.
    static func unpack(_ bytes: ArraySlice<UInt8>) -> (id: UInt64, value: UInt32, text: String?)? {
        let base = bytes.startIndex
        guard bytes.count >= 14, bytes[base] == tag, bytes.count == 14 + Int(bytes[base + 13]) else { return nil }
        var id: UInt64 = 0
        for i in 1...8 { id = id << 8 | UInt64(bytes[base + i]) }
        let number = value(bytes)
        guard bytes.count > 14 else { return (id, number, nil) }
        guard let text = bytes[(base + 14)...].withUnsafeBufferPointer(UTF8Text.string) else { return nil }
        return (id, number, text)
    }

    /// Why binary meta (`bytes` starts with the tag) cannot be read; nil when it can, or when
    /// `bytes` is not binary meta.
    static func problem(_ bytes: ArraySlice<UInt8>, of kind: String, text: String) -> String? {
        bytes.withUnsafeBytes { problem($0, of: kind, text: text) }
    }

    /// ``problem(_:of:text:)`` of meta read in place.
    static func problem(_ bytes: UnsafeRawBufferPointer, of kind: String, text: String) -> String? {
        guard bytes.first == tag else { return nil }
        guard bytes.count >= 14 else { return "binary \(kind) meta is \(bytes.count) bytes, shorter than its 14 fixed ones" }
        let count = Int(bytes[13])
        guard bytes.count == 14 + count else { return "binary \(kind) meta is \(bytes.count) bytes, not 14 + its \(text)'s \(count)" }
        let valid = UnsafeRawBufferPointer(rebasing: bytes[14...]).withMemoryRebound(to: UInt8.self, UTF8Text.isValid)
        return valid ? nil : "the \(text) in binary \(kind) meta is not UTF-8"
    }

    /// The u32 after the id (`timeout_ms` or `elapsed_us`) of binary meta whose length was checked.
    static func value(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes(value)
    }

    /// ``value(_:)`` of meta read in place.
    static func value(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var value: UInt32 = 0
        for i in 9...12 { value = value << 8 | UInt32(bytes[i]) }
        return value
    }

    /// The `timeout_ms` of binary request meta (nil when it gives none, or cannot be read).
    static func timeoutMs(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard problem(bytes, of: "request", text: "caller") == nil else { return nil }
        let timeout = value(bytes)
        return timeout == 0 ? nil : Int(timeout)
    }

    static func request(_ bytes: ArraySlice<UInt8>) -> RequestMeta? {
        guard let (id, timeout, caller) = unpack(bytes) else { return nil }
        return RequestMeta(id: String(id), timeoutMs: timeout == 0 ? nil : Int(timeout), caller: caller)
    }

    static func reply(_ bytes: ArraySlice<UInt8>) -> ReplyMeta? {
        guard let (id, elapsed, from) = unpack(bytes) else { return nil }
        return ReplyMeta(id: String(id), from: from, elapsedMicros: elapsed == noElapsed ? nil : Int(elapsed))
    }
}

/// Request and reply meta are small flat JSON objects on every request: written and read by
/// hand (``FlatJSON``, string building), several times faster than Codable's coders or JSONSerialization.
enum JSONCoding {
    enum Field {
        case text(String?)
        case integer(Int?)
    }

    /// Builds `{"k":v,...}` from fields in order (sorted keys by construction); nil fields are
    /// left out.
    static func write(_ fields: [(StaticString, Field)]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(96)
        for (key, field) in fields {
            switch field {
            case .text(nil), .integer(nil): continue
            default: break
            }
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            out.append(contentsOf: "\":".utf8)
            switch field {
            case .text(let text?): appendQuoted(text, to: &out)
            case .integer(let number?): out.append(contentsOf: String(number).utf8)
            default: break
            }
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Appends `text` as a JSON string. Works on UTF-8 bytes: every byte of a multi-byte
    /// sequence is >= 0x80, so only ASCII needs escaping.
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Ids, names and most text need no escape: one copy instead of a branch and an
        // append per byte (the per-byte loop was 8 % of a caller's I/O thread at 64 requests in flight).
        var text = text
        let copied = text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case ..<0x20: out.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension RequestMeta {
    /// ``parse(_:)`` of a part of a frame: binary meta is read in place, JSON meta is copied out
    /// first (the JSON reader takes an array).
    static func parse(_ bytes: ArraySlice<UInt8>) -> RequestMeta? {
        bytes.first == BinaryMeta.tag ? BinaryMeta.request(bytes) : parse(Array(bytes))
    }

    /// Lenient, like `init(from:)`: fields of the wrong type are ignored. Reads
    /// ``BinaryMeta`` too (nil when its length is wrong).
    package static func parse(_ bytes: [UInt8]) -> RequestMeta? {
        if bytes.first == BinaryMeta.tag { return BinaryMeta.request(bytes[...]) }
        return FlatJSON.read(bytes, into: RequestMeta()) { meta, key, value in
            switch key {
            case "id": meta.id = value.text
            case "timeout_ms": meta.timeoutMs = value.integer
            case "trace_id": meta.traceID = value.text
            case "correlation_id": meta.correlationID = value.text
            case "caller": meta.caller = value.text
            default: break
            }
        }
    }

    /// This meta as ``BinaryMeta``; nil when it holds what that cannot (a trace or correlation
    /// id, an id that is not a decimal number, a caller over 255 bytes, a timeout out of range).
    func binaryFields() -> BinaryMeta.Fields? {
        guard let id = id.flatMap(BinaryMeta.number) else { return nil }
        return binaryFields(id: id)
    }

    /// The binary fields with `id` as the id, whatever the meta's own: nil when a field binary
    /// meta cannot carry is set.
    func binaryFields(id: UInt64) -> BinaryMeta.Fields? {
        guard traceID == nil, correlationID == nil else { return nil }
        // 0 means "none" in binary meta: a timeout of 0 ms (meaningless, but sent) stays JSON.
        let timeout = timeoutMs ?? 0
        guard timeoutMs != 0, timeout >= 0, timeout <= Int(UInt32.max) else { return nil }
        return BinaryMeta.Fields(id: id, value: UInt32(timeout), text: caller)
    }

    func json() -> [UInt8] {
        JSONCoding.write([
            ("caller", .text(caller)), ("correlation_id", .text(correlationID)), ("id", .text(id)), ("timeout_ms", .integer(timeoutMs)),
            ("trace_id", .text(traceID)),
        ])
    }
}

extension ReplyMeta {
    /// ``parse(_:)`` of a part of a frame: binary meta is read in place, JSON meta is copied out
    /// first (the JSON reader takes an array).
    static func parse(_ bytes: ArraySlice<UInt8>) -> ReplyMeta? {
        bytes.first == BinaryMeta.tag ? BinaryMeta.reply(bytes) : parse(Array(bytes))
    }

    /// Lenient like ``RequestMeta/parse(_:)``: fields of the wrong type are ignored. Reads
    /// ``BinaryMeta`` too (nil when its length is wrong).
    package static func parse(_ bytes: [UInt8]) -> ReplyMeta? {
        if bytes.first == BinaryMeta.tag { return BinaryMeta.reply(bytes[...]) }
        return FlatJSON.read(bytes, into: ReplyMeta()) { meta, key, value in
            switch key {
            case "id": meta.id = value.text
            case "from": meta.from = value.text
            case "elapsed_us": meta.elapsedMicros = value.integer
            default: break
            }
        }
    }

    /// This meta as ``BinaryMeta``; nil when its id is missing or not a decimal number, or
    /// `from` is over 255 bytes. An elapsed time over `UInt32.max - 1` µs is sent as that.
    func binaryFields() -> BinaryMeta.Fields? {
        guard let id = id.flatMap(BinaryMeta.number) else { return nil }
        return binaryFields(id: id)
    }

    /// The binary fields with `id` as the id, whatever the meta's own: nil when `from` is over
    /// 255 bytes.
    func binaryFields(id: UInt64) -> BinaryMeta.Fields? {
        let elapsed = elapsedMicros.map { min(UInt32(clamping: $0), BinaryMeta.noElapsed - 1) } ?? BinaryMeta.noElapsed
        return BinaryMeta.Fields(id: id, value: elapsed, text: from)
    }

    func json() -> [UInt8] {
        JSONCoding.write([("elapsed_us", .integer(elapsedMicros)), ("from", .text(from)), ("id", .text(id))])
    }
}

extension JSONEncoder {
    /// Sorted keys, no escaped slashes: stable bytes for the wire and for tests.
    public static var bus: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
