import Foundation
import Testing

@testable import Bus
@testable import BusKernel
@testable import BusWire

/// The kernel's reply writer: the JSON Foundation would write (keys sorted, slashes as they are),
/// Foundation's own objects (parsed payload values) kept exactly.
struct ReplyJSONTests {
    func text(_ value: Any) -> String? { ReplyJSON.encode(value).map { String(decoding: $0, as: UTF8.self) } }

    @Test func encode_writesSwiftValues_withSortedKeysAndEscapedStrings() {
        let missing: String? = nil
        let value: [String: Any] = [
            "b": [1, UInt64(18_446_744_073_709_551_615), Int64(-3), true, false, 2.5, 4.0],
            "a": "say \"hi\"\n\\ tab\t \u{01} a/b é",
            "c": ["z": NSNull(), "y": missing as Any, "x": [[String: Any]]()],
        ]
        #expect(
            text(value)
                == #"{"a":"say \"hi\"\n\\ tab\t \u0001 a/b é","b":[1,18446744073709551615,-3,true,false,2.5,4],"c":{"x":[],"y":null,"z":null}}"#)
        #expect(text(["x": Double.nan]) == nil)
    }

    @Test func encode_keepsFoundationsParsedValues_boolsAsBools() throws {
        let parsed = try JSONSerialization.jsonObject(with: Data(#"{"on": true, "n": 3, "f": 1.5, "s": "x", "l": [false, 0]}"#.utf8))
        let written = try #require(text(["value": parsed]))
        #expect(written == #"{"value":{"f":1.5,"l":[false,0],"n":3,"on":true,"s":"x"}}"#)
    }

    @Test func raw_isWrittenAsItIs() {
        #expect(text(["payload": ReplyJSON.Raw(bytes: Array(#"{"v": [1, 2]}"#.utf8))]) == #"{"payload":{"v": [1, 2]}}"#)
    }

    @Test func retainedPayload_withAByteOrderMarkOrInUTF16_goesAsBase64_soTheReplyStaysJSON() throws {
        let meta = EventMeta(flags: [.retained], seq: 1, timestampMicros: 0, source: "s", instance: "i")
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8)
        let utf16: [UInt8] = Array(#"{"a":1}"#.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        for payload in [bom, utf16] {
            let object = KernelLoop.replyObject("t.x", meta, payload)
            #expect(object["payload"] == nil)
            #expect(object["payload_b64"] as? String == Data(payload).base64EncodedString())
            let reply = try #require(ReplyJSON.encode(object))
            #expect((try? JSONSerialization.jsonObject(with: Data(reply))) != nil)
        }
        let plain = KernelLoop.replyObject("t.x", meta, Array(#" {"a":1}"#.utf8))
        #expect(plain["payload"] is ReplyJSON.Raw)
    }
}
