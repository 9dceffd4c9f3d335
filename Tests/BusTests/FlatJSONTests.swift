import Foundation
import Testing

@testable import Bus
@testable import BusWire

extension FlatJSON {
    /// Every member of the object in `bytes` (a repeated key keeps its last value), or nil
    /// when `bytes` is not exactly one valid JSON object: what the tests compare.
    static func object(_ bytes: [UInt8]) -> [String: Value]? {
        read(bytes, into: [:]) { members, key, value in members[key] = value }
    }
}

/// `FlatJSON` must accept exactly what a JSON parser accepts (it replaced `JSONSerialization`
/// for request and reply meta), and read the string and integer members the same way.
struct FlatJSONTests {
    static let valid: [String] = [
        "{}", " { } ", "\n{\"a\":1}\t", #"{"id":"r-1","timeout_ms":5000,"caller":"busctl"}"#,
        #"{"a":-0,"b":0,"c":-12,"d":1.5,"e":1e3,"f":-2.5E-3,"g":true,"h":false,"i":null}"#,
        #"{"nested":{"x":[1,2,{"y":"z"}],"e":{}},"list":[],"s":"after"}"#,
        #"{"esc":"q\"b\\s\/n\nr\rt\tb\bf\f","u":"\u00e9\u4e2d\ud83d\ude00"}"#,
        #"{"utf8":"héllo 中 😀"}"#, #"{"dup":1,"dup":"two"}"#, #"{"big":92233720368547758070}"#,
        #"{ "spaced" : "v" , "n" : 7 }"#,
    ]

    static let invalid: [String] = [
        "", " ", "[]", "\"s\"", "1", "null", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,\"a\":1}",
        "{\"a\":1}}", "{\"a\":1} x", "{a:1}", "{'a':1}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}",
        "{\"a\":1e}", "{\"a\":-}", "{\"a\":+1}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"x}",
        "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud83d\"}", "{\"a\":\"\\ude00\"}", "{\"a\":\"tab\there\"}",
        "{\"a\":[1,]}", "{\"a\":[1 2]}", "{\"a\":{\"b\"}}", "{\"a\":1 \"b\":2}",
        String(repeating: "{\"a\":", count: 40) + "1" + String(repeating: "}", count: 40),
    ]

    @Test(arguments: valid)
    func validObjects_areAccepted_withTheSameStringsAndIntegers(text: String) throws {
        let parsed = try #require(FlatJSON.object(Array(text.utf8)))
        let reference = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(parsed.keys) == Set(reference.keys))
        for (key, value) in parsed {
            switch value {
            case .string(let s): #expect(reference[key] as? String == s, "key \(key)")
            case .integer(let n): #expect((reference[key] as? NSNumber)?.intValue == n, "key \(key)")
            case .other: #expect(!(reference[key] is String), "key \(key)")
            }
        }
    }

    @Test(arguments: invalid)
    func invalidText_isRefused(text: String) {
        #expect(FlatJSON.object(Array(text.utf8)) == nil)
    }

    @Test func invalidUTF8_isRefused() {
        #expect(FlatJSON.object(Array("{\"a\":\"".utf8) + [0xC3, 0x28] + Array("\"}".utf8)) == nil)
        #expect(FlatJSON.object([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) == nil)
    }

    @Test func numbers_integersOnlyWhenIntegral() throws {
        let parsed = try #require(FlatJSON.object(Array(#"{"a":42,"b":-7,"c":1.0,"d":99999999999999999999}"#.utf8)))
        #expect(parsed["a"] == .integer(42))
        #expect(parsed["b"] == .integer(-7))
        #expect(parsed["c"] == .other)
        #expect(parsed["d"] == .other)
        let edges = try #require(
            FlatJSON.object(Array(#"{"max":9223372036854775807,"min":-9223372036854775808,"over":9223372036854775808,"zero":-0}"#.utf8)))
        #expect(edges["max"] == .integer(Int.max))
        #expect(edges["min"] == .integer(Int.min))
        #expect(edges["over"] == .other)
        #expect(edges["zero"] == .integer(0))
    }

    @Test func members_areVisitedInOrder_andInvalidTextIsReported() {
        var keys: [String] = []
        #expect(FlatJSON.forEachMember(Array(#"{"b":1,"a":{"x":[1,2]},"b":"two"}"#.utf8)) { key, _ in keys.append(key) })
        #expect(keys == ["b", "a", "b"])
        #expect(!FlatJSON.forEachMember(Array(#"{"a":1,"b":}"#.utf8)) { _, _ in })
        #expect(RequestMeta.parse(Array(#"{"id":"x","timeout_ms":"soon"}"#.utf8)) == RequestMeta(id: "x"))
        #expect(ReplyMeta.parse(Array(#"{"id":"x","elapsed_us":12"#.utf8)) == nil)
    }

    @Test func written_meta_isReadBack_includingEscapes() throws {
        let meta = RequestMeta(id: "a\"b\\c\n\u{1}é😀", timeoutMs: 250, traceID: "t", correlationID: nil, caller: "x")
        let bytes = meta.json()
        #expect(try JSONSerialization.jsonObject(with: Data(bytes)) is [String: Any])
        #expect(RequestMeta.parse(bytes) == meta)
        let reply = ReplyMeta(id: "r\t1", from: "svc", elapsedMicros: 12)
        let decoded = try ReplyBody.decode(ReplyBody(status: 200, meta: reply).encode())
        #expect(decoded.meta == reply)
    }
}
