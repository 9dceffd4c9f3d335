import Foundation
import Testing

@testable import BusSupport
@testable import BusWire
@testable import BusZMQ

/// The caller's request written straight into its message (``OneFrameEncoding``) and its
/// reply read where libzmq received it (``ReplyBody/decodeBinaryOneFrame(_:name:)``): the same
/// bytes and values as the array codecs, which the rest of the bus and other clients use.
struct InPlaceBodyTests {
    private func written(_ encoding: OneFrameEncoding) -> [UInt8] {
        var out = [UInt8](repeating: 0xEE, count: encoding.count)
        out.withUnsafeMutableBytes { encoding.write(to: $0) }
        return out
    }

    @Test(arguments: [
        RequestBody(
            method: "echo", meta: RequestMeta(id: "42", timeoutMs: 1000, caller: "caller-with-a-long-name"), payload: Array(#"{"a":1}"#.utf8)),
        RequestBody(method: "ping", meta: RequestMeta(id: "0", timeoutMs: 5), payload: []),
        RequestBody(method: "m", meta: RequestMeta(id: "own-id", timeoutMs: 1000, caller: "c"), payload: [1, 2, 3]),
        RequestBody(method: "tr", meta: RequestMeta(id: "7", timeoutMs: 1000, traceID: "t-1"), payload: Array(repeating: 9, count: 4096)),
        RequestBody(method: "x"),
    ])
    func request_writtenInPlace_isTheOneFrameEncodingsBytes(body: RequestBody) throws {
        for binaryMeta in [false, true] {
            let encoding = try #require(OneFrameEncoding(body, binaryMeta: binaryMeta))
            let expected = body.encode(oneFrame: true, binaryMeta: binaryMeta)
            #expect(expected.count == 1)
            #expect(written(encoding) == expected[0])
            #expect(try RequestBody.decode([written(encoding)]) == body)
        }
    }

    @Test func request_readInPlace_isWhatTheArrayDecoderReads() throws {
        let bodies = [
            RequestBody(
                method: "echo", meta: RequestMeta(id: "42", timeoutMs: 1000, caller: "caller-with-a-long-name"), payload: Array(#"{"a":1}"#.utf8)),
            RequestBody(method: "ping", meta: RequestMeta(id: "0"), payload: []),
            RequestBody(method: "m", meta: RequestMeta(id: "own-id", timeoutMs: 1000, caller: "c"), payload: [1, 2, 3]),
            RequestBody(method: "x"),
        ]
        for body in bodies {
            for binaryMeta in [false, true] {
                let frame = body.encode(oneFrame: true, binaryMeta: binaryMeta)[0]
                let decoded = frame.withUnsafeBytes { RequestBody.decodeOneFrame($0) }
                let binaryID = try #require(decoded).binaryID
                let hasBinary = binaryID != nil
                #expect(decoded?.body == (try RequestBody.decode([frame])))
                #expect(hasBinary == (binaryMeta && body.meta.binaryFields() != nil))
                if hasBinary { #expect(binaryID == body.meta.id.flatMap(BinaryMeta.number)) }
                // The reply to it takes the same form as `encode(answering:)` gives.
                let reply = ReplyBody(status: 200, meta: ReplyMeta(id: body.meta.id, from: "w"), payload: [7])
                #expect(reply.encode(oneFrame: true, binaryMeta: hasBinary) == reply.encode(answering: [frame]))
            }
        }
    }

    @Test func request_readInPlace_leavesAnyOtherOrUnreadableBody_toTheArrayDecoder() {
        func inPlace(_ frame: [UInt8]) -> RequestBody? { frame.withUnsafeBytes { RequestBody.decodeOneFrame($0)?.body } }
        let good = RequestBody(method: "echo", meta: RequestMeta(id: "5", timeoutMs: 100, caller: "c"), payload: [1]).encode(
            oneFrame: true, binaryMeta: true)[0]
        #expect(inPlace(good) != nil)
        #expect(inPlace(Array("echo".utf8)) == nil)
        #expect(inPlace([]) == nil)
        for cut in 1..<(good.count - 1) where cut < 2 + 4 + 2 + 14 + 1 {
            #expect(inPlace(Array(good.prefix(cut))) == nil)
        }
        var noMethod = good
        noMethod[1] = 0
        #expect(inPlace(noMethod) == nil)
        var badCaller = good
        badCaller[2 + 4 + 2 + 14] = 0xFF
        #expect(inPlace(badCaller) == nil)
        #expect(throws: BusError.self) { try RequestBody.decode([badCaller]) }
        var badJSON = RequestBody(method: "echo", meta: RequestMeta(id: "own"), payload: []).encode(oneFrame: true)[0]
        badJSON[2 + 4 + 2] = UInt8(ascii: "[")
        #expect(inPlace(badJSON) == nil)
    }

    /// A caller's request and a worker's reply with the request number handed over as a number
    /// are the bytes of the same body with the number as its id's text, in binary meta; a body
    /// that binary meta cannot carry has no such encoding.
    @Test func bodies_writtenWithTheirNumber_areTheBytesOfTheNumberAsText() throws {
        for number: UInt64 in [1, 42, 1_000_000, UInt64.max] {
            var request = RequestBody(method: "echo", meta: RequestMeta(timeoutMs: 1000, caller: "c"), payload: [1, 2])
            let byNumber = try #require(OneFrameEncoding(request, binaryID: number))
            request.meta.id = String(number)
            #expect(written(byNumber) == request.encode(oneFrame: true, binaryMeta: true)[0])
            var reply = ReplyBody(status: 200, meta: ReplyMeta(from: "w", elapsedMicros: 7), payload: [3])
            let replyByNumber = try #require(OneFrameEncoding(reply, binaryID: number))
            reply.meta.id = String(number)
            #expect(written(replyByNumber) == reply.encode(oneFrame: true, binaryMeta: true)[0])
        }
        #expect(OneFrameEncoding(RequestBody(method: "m", meta: RequestMeta(traceID: "t")), binaryID: 1) == nil)
        #expect(OneFrameEncoding(ReplyBody(status: 200, meta: ReplyMeta(from: String(repeating: "f", count: 256))), binaryID: 1) == nil)
    }

    /// One worker's decoding state across requests: names repeat the last one's string only
    /// while their bytes repeat; a request that does not read leaves the state as it was.
    @Test func decodingWithRememberedNames_readsWhatAFreshDecodeReads() throws {
        func frame(_ method: String, _ caller: String) -> [UInt8] {
            RequestBody(method: method, meta: RequestMeta(id: "9", timeoutMs: 100, caller: caller), payload: [5]).encode(
                oneFrame: true, binaryMeta: true)[0]
        }
        var badCaller = frame("echo", "c")
        badCaller[badCaller.count - 2] = 0xFF
        var texts = RequestBody.Texts()
        for bytes in [frame("echo", "a"), frame("ping", "a"), frame("echo", "bb"), badCaller, frame("echo", "bb"), frame("", "")] {
            let remembered = bytes.withUnsafeBytes { RequestBody.decodeOneFrame($0, texts: &texts) }
            let fresh = bytes.withUnsafeBytes { RequestBody.decodeOneFrame($0) }
            #expect(remembered?.body == fresh?.body)
            #expect(remembered?.binaryID == fresh?.binaryID)
        }
        #expect(frame("echo", "c").withUnsafeBytes { RequestBody.decodeOneFrame($0, texts: &texts) }?.body.meta.caller == "c")
    }

    @Test func recentText_isTheTextOfTheseBytes_orNilWhenNotUTF8() {
        var recent = RecentText()
        func text(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { recent.string($0) } }
        #expect(text([]) == "")
        #expect(text(Array("ab".utf8)) == "ab")
        #expect(text(Array("ab".utf8)) == "ab")
        #expect(text([0x61, 0xFF]) == nil)
        #expect(text(Array("ab".utf8)) == "ab")
        #expect(text(Array("é".utf8)) == "é")
        #expect(text([]) == "")
    }

    @Test func request_thatDoesNotFitOneFrame_hasNoInPlaceEncoding() {
        let longMethod = RequestBody(method: String(repeating: "m", count: 256), meta: RequestMeta(id: "1"))
        #expect(OneFrameEncoding(longMethod, binaryMeta: true) == nil)
        let longMeta = RequestBody(method: "m", meta: RequestMeta(id: "1", traceID: String(repeating: "t", count: 70_000)))
        #expect(OneFrameEncoding(longMeta, binaryMeta: false) == nil)
    }

    @Test func reply_encodedInTheFormOfItsRequest_isWhatEncodeAnsweringGives() throws {
        let replies = [
            ReplyBody(
                status: 200, meta: ReplyMeta(id: "42", from: "weather-7f3a9c-instance", elapsedMicros: 310), payload: Array(#"{"ok":true}"#.utf8)),
            ReplyBody(status: 503, meta: ReplyMeta(id: "mine", from: "w"), payload: []),
            ReplyBody(status: 1000, meta: ReplyMeta(id: "1"), payload: [1]),
        ]
        let requests: [Frames] = [
            RequestBody(method: "m", meta: RequestMeta(id: "42", timeoutMs: 1000)).encode(oneFrame: true, binaryMeta: true),
            RequestBody(method: "m", meta: RequestMeta(id: "42", timeoutMs: 1000)).encode(oneFrame: true, binaryMeta: false),
            RequestBody(method: "m", meta: RequestMeta(id: "42", timeoutMs: 1000)).encode(),
        ]
        // Inside a whole worker message: the body starts at frame 5.
        let head: Frames = [[], MDP.worker, [2], [9], []]
        for reply in replies {
            for request in requests {
                let expected = reply.encode(answering: head + request, from: 5)
                switch reply.encoding(answering: head + request, from: 5) {
                case .oneFrame(let encoding):
                    var out = [UInt8](repeating: 0, count: encoding.count)
                    out.withUnsafeMutableBytes { encoding.write(to: $0) }
                    #expect([out] == expected)
                case .frames(let frames):
                    #expect(frames == expected)
                    // Only a reply that does not fit the one-frame form, or a request not in it.
                    #expect(!(100...999).contains(reply.status) || request.count == 3)
                }
            }
        }
    }

    private func decoded(_ frame: [UInt8], names: inout [String]) -> (body: ReplyBody, id: UInt64)? {
        var seen: [String] = []
        let result = frame.withUnsafeBytes { bytes in
            ReplyBody.decodeBinaryOneFrame(bytes) { name in
                let text = UTF8Text.string(name.assumingMemoryBound(to: UInt8.self))
                if let text { seen.append(text) }
                return text
            }
        }
        names += seen
        return result
    }

    @Test func reply_withBinaryMeta_readsInPlace_asTheArrayDecoderDoes() throws {
        let replies = [
            ReplyBody(
                status: 200, meta: ReplyMeta(id: "42", from: "weather-7f3a9c-instance", elapsedMicros: 310), payload: Array(#"{"ok":true}"#.utf8)),
            ReplyBody(status: 404, meta: ReplyMeta(id: "0"), payload: []),
            ReplyBody(status: 999, meta: ReplyMeta(id: "18446744073709551615", from: "w"), payload: Array(repeating: 1, count: 100_000)),
        ]
        for reply in replies {
            let frame = reply.encode(oneFrame: true, binaryMeta: true)[0]
            var names: [String] = []
            let (body, id) = try #require(decoded(frame, names: &names))
            #expect(body == (try ReplyBody.decode([frame])))
            #expect(body == reply)
            #expect(String(id) == reply.meta.id)
            #expect(names == (reply.meta.from.map { [$0] } ?? []))
        }
    }

    @Test func reply_inAnyOtherFormOrUnreadable_isLeftToTheGeneralDecoder() throws {
        let reply = ReplyBody(status: 200, meta: ReplyMeta(id: "5", from: "w"), payload: [1])
        var names: [String] = []
        // JSON meta (a custom id), the three-frame form's first frame, nothing.
        #expect(
            decoded(ReplyBody(status: 200, meta: ReplyMeta(id: "mine"), payload: [1]).encode(oneFrame: true, binaryMeta: true)[0], names: &names)
                == nil)
        #expect(decoded(reply.encode()[0], names: &names) == nil)
        #expect(decoded([], names: &names) == nil)
        var frame = reply.encode(oneFrame: true, binaryMeta: true)[0]
        // Truncated inside the meta; a status out of range; a `from` that is not UTF-8.
        #expect(decoded(Array(frame.prefix(12)), names: &names) == nil)
        var badStatus = frame
        badStatus[1] = 0
        badStatus[2] = 42
        #expect(decoded(badStatus, names: &names) == nil)
        frame[5 + 14] = 0xFF
        #expect(decoded(frame, names: &names) == nil)
        #expect(throws: BusError.self) { try ReplyBody.decode([frame]) }
        // A meta length that disagrees with the text length it holds.
        var badLength = reply.encode(oneFrame: true, binaryMeta: true)[0]
        badLength[5 + 13] = 9
        #expect(decoded(badLength, names: &names) == nil)
    }
}
