import Bus
import Foundation
import Testing

struct BodyCodecTests {
    @Test func requestBody_roundTrip() throws {
        let body = RequestBody(method: "echo", meta: RequestMeta(id: "r1", timeoutMs: 500, traceID: "t", caller: "x"), payload: Array("{}".utf8))
        #expect(try RequestBody.decode(body.encode()) == body)
    }

    @Test func requestBody_metaUsesSnakeCaseKeys() throws {
        let frames = RequestBody(method: "m", meta: RequestMeta(id: "1", timeoutMs: 5)).encode()
        let json = try #require(try JSONSerialization.jsonObject(with: Data(frames[1])) as? [String: Any])
        #expect(json["timeout_ms"] as? Int == 5)
        #expect(json["id"] as? String == "1")
    }

    /// Control characters are made here, not passed as test arguments: a NUL or a bell in an
    /// argument ends up in the test runner's output.
    @Test func requestMeta_anyText_isValidJSON_andReadsBackTheSame() throws {
        let texts = [
            "plain-id.42", "", "quote\"back\\slash", "line\nfeed\ttab\r", "bell\u{07}nul\u{00}end", "grüße ✓ 😀", "/slash",
        ]
        for text in texts {
            let meta = RequestMeta(id: text, traceID: "t", caller: text)
            let frames = RequestBody(method: "m", meta: meta).encode()
            let json = try #require(try JSONSerialization.jsonObject(with: Data(frames[1])) as? [String: Any])
            #expect(json["id"] as? String == text, "\(Array(text.utf8))")
            #expect(json["caller"] as? String == text, "\(Array(text.utf8))")
            #expect(try RequestBody.decode(frames).meta == meta, "\(Array(text.utf8))")
        }
    }

    @Test func requestBody_methodOnly_isAccepted() throws {
        let body = try RequestBody.decode([Array("ping".utf8)])
        #expect(body.method == "ping")
        #expect(body.payload.isEmpty)
    }

    @Test func requestBody_whenNoMethodOrBadMeta_throwsMalformed() {
        #expect(throws: BusError.self) { try RequestBody.decode([]) }
        #expect(throws: BusError.self) { try RequestBody.decode([[]]) }
        #expect(throws: BusError.self) { try RequestBody.decode([Array("m".utf8), Array("{not json".utf8)]) }
    }

    @Test func replyBody_roundTripAndErrorBody() throws {
        let reply = ReplyBody.error(404, code: "no_such_method", message: "nope", id: "7", from: "svc")
        let decoded = try ReplyBody.decode(reply.encode())
        #expect(decoded.status == 404)
        #expect(decoded.meta.id == "7")
        #expect(decoded.errorBody == ErrorBody(code: "no_such_method", message: "nope"))
    }

    @Test func replyBody_whenStatusNotThreeDigits_throws() {
        #expect(throws: BusError.self) { try ReplyBody.decode([Array("20".utf8)]) }
        #expect(throws: BusError.self) { try ReplyBody.decode([Array("abc".utf8)]) }
        #expect(throws: BusError.self) { try ReplyBody.decode([]) }
    }

    @Test func endpoints_deriveEventPortsFromKernel() throws {
        let e = try Endpoints(kernel: "tcp://10.0.0.5:7000")
        #expect(e.eventsIn == "tcp://10.0.0.5:7001")
        #expect(e.eventsOut == "tcp://10.0.0.5:7002")
        #expect(throws: BusError.self) { try Endpoints(kernel: "ipc:///tmp/k") }
        let ipc = try Endpoints(kernel: "ipc:///tmp/k", eventsIn: "ipc:///tmp/i", eventsOut: "ipc:///tmp/o")
        #expect(ipc.eventsOut == "ipc:///tmp/o")
    }

    @Test func retainedValue_jsonRoundTrip_keepsPayloadAndMeta() throws {
        let meta = EventMeta(flags: [.retained], seq: 42, timestampMicros: 9, source: "auth", instance: "a1")
        let value = RetainedValue(topic: "auth.state", meta: meta, payload: Array(#"{"user":"ann"}"#.utf8))
        let back = try RetainedValue.from(jsonObject: value.jsonObject())
        #expect(back == value)
        let binary = RetainedValue(topic: "x.y", meta: meta, payload: [0xff, 0x00])
        #expect(try RetainedValue.from(jsonObject: binary.jsonObject()).payload == [0xff, 0x00])
    }

    @Test func requestMeta_wrongTypedField_keepsTheOthers() throws {
        let body = try RequestBody.decode([Array("m".utf8), Array(#"{"id":"r9","timeout_ms":"soon"}"#.utf8), []])
        #expect(body.meta.id == "r9")
        #expect(body.meta.timeoutMs == nil)
    }

    @Test func eventMeta_longNames_areCutOnACharacterBoundary() throws {
        let name = String(repeating: "é", count: 200)  // 400 bytes of 2-byte characters
        let meta = EventMeta(seq: 1, timestampMicros: 1, source: name, instance: "i")
        let decoded = try EventMeta.decode(meta.encode())
        #expect(decoded.source.utf8.count == 254)
        #expect(decoded.source.allSatisfy { $0 == "é" })
    }
}
