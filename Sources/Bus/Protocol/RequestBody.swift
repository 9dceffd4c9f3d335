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
    /// (``OneFrameBody``) when the method fits in 255 bytes and the meta in 65 535.
    public func encode(oneFrame: Bool = false) -> Frames {
        let metaBytes = meta.json()
        let methodCount = method.utf8.count
        guard oneFrame, methodCount <= 255, metaBytes.count <= 0xFFFF else { return [Array(method.utf8), metaBytes, payload] }
        let frame = OneFrameBody.pack(headCount: 1 + methodCount, meta: metaBytes, payload: payload) { head in
            head.append(UInt8(methodCount))
            head.append(contentsOf: method.utf8)
        }
        return [frame]
    }

    /// The parts of a one-frame request body, as ranges of `frame`; nil when it is truncated.
    static func oneFrameParts(_ frame: [UInt8]) -> (method: Range<Int>, meta: Range<Int>, payload: Range<Int>)? {
        guard frame.count >= 2, frame[0] == OneFrameBody.marker else { return nil }
        let methodEnd = 2 + Int(frame[1])
        guard let rest = OneFrameBody.split(frame, headEnd: methodEnd) else { return nil }
        return (2..<methodEnd, rest.meta, rest.payload)
    }

    /// A one-frame request body as the three frames `[method][meta][payload]` (for a worker
    /// that did not say it reads the one-frame form); nil when `body` is not one, or truncated.
    static func threeFrames(_ body: Frames) -> Frames? {
        guard OneFrameBody.isOneFrame(body), let parts = oneFrameParts(body[0]) else { return nil }
        let frame = body[0]
        return [Array(frame[parts.method]), Array(frame[parts.meta]), Array(frame[parts.payload])]
    }

    /// The method of a request body in either form, without decoding the rest ("" when there
    /// is none).
    static func peekMethod(_ frames: Frames, from start: Int) -> String {
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
    static func decode(_ frames: Frames, from start: Int) throws(BusError) -> RequestBody {
        if OneFrameBody.isOneFrame(frames, from: start) {
            let frame = frames[start]
            guard let parts = oneFrameParts(frame) else {
                throw .malformed("one-frame request body is truncated (its lengths run past its \(frame.count) bytes)")
            }
            return try decode(method: Array(frame[parts.method]), meta: Array(frame[parts.meta]), payload: Array(frame[parts.payload]))
        }
        return try decode(
            method: start < frames.count ? frames[start] : [], meta: frames.count > start + 1 ? frames[start + 1] : [],
            payload: frames.count > start + 2 ? frames[start + 2] : [])
    }

    private static func decode(method methodBytes: [UInt8], meta metaBytes: [UInt8], payload: [UInt8]) throws(BusError) -> RequestBody {
        guard !methodBytes.isEmpty else {
            throw .malformed("request body has no method frame")
        }
        guard let method = UTF8Text.string(methodBytes) else {
            throw .malformed("method name is not UTF-8")
        }
        var meta = RequestMeta()
        if !metaBytes.isEmpty {
            guard let parsed = RequestMeta.parse(metaBytes) else {
                throw .malformed("request meta is not a JSON object")
            }
            meta = parsed
        }
        return RequestBody(method: method, meta: meta, payload: payload)
    }

    /// Reads only the meta of an otherwise opaque body (either form), for the kernel
    /// (deadline, id).
    static func peekMeta(_ body: Frames) -> RequestMeta? {
        if OneFrameBody.isOneFrame(body) {
            guard let parts = oneFrameParts(body[0]), !parts.meta.isEmpty, body[0][parts.meta.lowerBound] == UInt8(ascii: "{") else {
                return nil
            }
            return RequestMeta.parse(Array(body[0][parts.meta]))
        }
        guard body.count > 1, !body[1].isEmpty, body[1].first == UInt8(ascii: "{") else { return nil }
        return RequestMeta.parse(body[1])
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
    /// (``OneFrameBody``) when the meta fits in 65 535 bytes.
    public func encode(oneFrame: Bool = false) -> Frames {
        let metaBytes = meta.json()
        guard oneFrame, metaBytes.count <= 0xFFFF, (100...999).contains(status) else {
            return [status == 200 ? Self.okFrame : Array(String(status).utf8), metaBytes, payload]
        }
        let frame = OneFrameBody.pack(headCount: 2, meta: metaBytes, payload: payload) { head in
            head.append(UInt8(status >> 8))
            head.append(UInt8(status & 0xFF))
        }
        return [frame]
    }

    /// The body's frames in the form of `request`, the request body it answers.
    func encode(answering request: Frames) -> Frames {
        encode(oneFrame: OneFrameBody.isOneFrame(request))
    }

    private static let okFrame: [UInt8] = Array("200".utf8)

    public static func decode(_ frames: Frames) throws(BusError) -> ReplyBody {
        try decode(frames, from: 0)
    }

    /// Decodes the body that starts at frame `start` of a whole message (no copy of the frames
    /// after the MDP header).
    static func decode(_ frames: Frames, from start: Int) throws(BusError) -> ReplyBody {
        if OneFrameBody.isOneFrame(frames, from: start) {
            let frame = frames[start]
            guard let status = peekStatus(frame), let parts = OneFrameBody.split(frame, headEnd: 3) else {
                throw .malformed("one-frame reply body is truncated or its status is not 100-999")
            }
            return try decode(status: status, meta: Array(frame[parts.meta]), payload: Array(frame[parts.payload]))
        }
        guard start < frames.count, let status = peekStatus(frames[start]) else {
            throw .malformed("reply body does not start with a 3-digit status frame")
        }
        return try decode(
            status: status, meta: frames.count > start + 1 ? frames[start + 1] : [], payload: frames.count > start + 2 ? frames[start + 2] : [])
    }

    private static func decode(status: Int, meta metaBytes: [UInt8], payload: [UInt8]) throws(BusError) -> ReplyBody {
        var meta = ReplyMeta()
        if !metaBytes.isEmpty {
            guard let parsed = ReplyMeta.parse(metaBytes) else {
                throw .malformed("reply meta is not a JSON object")
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
        var frame: [UInt8] = []
        frame.reserveCapacity(3 + headCount + meta.count + payload.count)
        frame.append(marker)
        head(&frame)
        frame.append(UInt8(meta.count >> 8))
        frame.append(UInt8(meta.count & 0xFF))
        frame.append(contentsOf: meta)
        frame.append(contentsOf: payload)
        return frame
    }

    /// The meta and payload of a one-frame body whose head ends at byte `headEnd`, as ranges of
    /// `frame`; nil when its lengths run past its end.
    static func split(_ frame: [UInt8], headEnd: Int) -> (meta: Range<Int>, payload: Range<Int>)? {
        guard frame.count >= headEnd + 2 else { return nil }
        let metaEnd = headEnd + 2 + (Int(frame[headEnd]) << 8 | Int(frame[headEnd + 1]))
        guard frame.count >= metaEnd else { return nil }
        return ((headEnd + 2)..<metaEnd, metaEnd..<frame.count)
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
    /// Lenient, like `init(from:)`: fields of the wrong type are ignored.
    static func parse(_ bytes: [UInt8]) -> RequestMeta? {
        FlatJSON.read(bytes, into: RequestMeta()) { meta, key, value in
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

    func json() -> [UInt8] {
        JSONCoding.write([
            ("caller", .text(caller)), ("correlation_id", .text(correlationID)), ("id", .text(id)), ("timeout_ms", .integer(timeoutMs)),
            ("trace_id", .text(traceID)),
        ])
    }
}

extension ReplyMeta {
    /// Lenient like ``RequestMeta/parse(_:)``: fields of the wrong type are ignored.
    static func parse(_ bytes: [UInt8]) -> ReplyMeta? {
        FlatJSON.read(bytes, into: ReplyMeta()) { meta, key, value in
            switch key {
            case "id": meta.id = value.text
            case "from": meta.from = value.text
            case "elapsed_us": meta.elapsedMicros = value.integer
            default: break
            }
        }
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
