import BusSupport

/// A validating reader for the small JSON objects carried on every request and reply (the meta
/// frames): the whole text is checked against RFC 8259, and the top-level members whose values
/// are strings or integers are returned. Several times faster than `JSONSerialization`, which
/// builds Foundation objects for every value and was a visible share of each request's cost.
package enum FlatJSON {
    package enum Value: Equatable {
        case string(String)
        case integer(Int)
        /// Any other valid JSON value (a fraction, a boolean, null, an array, an object).
        case other

        var text: String? {
            if case .string(let text) = self { return text }
            return nil
        }

        var integer: Int? {
            if case .integer(let value) = self { return value }
            return nil
        }
    }

    /// Nesting deeper than this is refused (meta objects are flat; this bounds the recursion).
    static let maxDepth = 32

    /// Builds a value from the members of the JSON object in `bytes`: starts from `initial` and
    /// lets `apply` set what each member means. Nil when `bytes` is not one valid JSON object.
    static func read<T>(_ bytes: [UInt8], into initial: T, _ apply: (inout T, String, Value) -> Void) -> T? {
        var result = initial
        return forEachMember(bytes) { apply(&result, $0, $1) } ? result : nil
    }

    /// Calls `body` with each top-level member, in order, without building a dictionary (the
    /// meta readers on every request and reply). Returns false, after calling `body` for the
    /// members before the error, when `bytes` is not exactly one valid JSON object: use the
    /// members only when it returns true.
    package static func forEachMember(_ bytes: [UInt8], _ body: (String, Value) -> Void) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer)
            parser.skipSpace()
            guard parser.topObject(body) else { return false }
            parser.skipSpace()
            return parser.index == buffer.count
        }
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        private mutating func expect(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        /// The top-level object, handing each member to `body`.
        mutating func topObject(_ body: (String, Value) -> Void) -> Bool {
            guard expect(UInt8(ascii: "{")) else { return false }
            skipSpace()
            if expect(UInt8(ascii: "}")) { return true }
            while true {
                skipSpace()
                guard let key = string() else { return false }
                skipSpace()
                guard expect(UInt8(ascii: ":")) else { return false }
                skipSpace()
                guard let value = value(depth: 1) else { return false }
                body(key, value)
                skipSpace()
                if expect(UInt8(ascii: ",")) { continue }
                return expect(UInt8(ascii: "}"))
            }
        }

        private mutating func value(depth: Int) -> Value? {
            guard let byte = current else { return nil }
            switch byte {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            case UInt8(ascii: "{"), UInt8(ascii: "["): return container(depth: depth + 1) ? .other : nil
            case UInt8(ascii: "t"): return literal("true") ? .other : nil
            case UInt8(ascii: "f"): return literal("false") ? .other : nil
            case UInt8(ascii: "n"): return literal("null") ? .other : nil
            default: return nil
            }
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let start = word.utf8Start
            for offset in 0..<count where bytes[index + offset] != start[offset] { return false }
            index += count
            return true
        }

        /// A nested object or array, validated and skipped.
        private mutating func container(depth: Int) -> Bool {
            guard depth <= FlatJSON.maxDepth, let open = current else { return false }
            let isObject = open == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            index += 1
            skipSpace()
            if expect(close) { return true }
            while true {
                skipSpace()
                if isObject {
                    guard string() != nil else { return false }
                    skipSpace()
                    guard expect(UInt8(ascii: ":")) else { return false }
                    skipSpace()
                }
                guard value(depth: depth) != nil else { return false }
                skipSpace()
                if expect(UInt8(ascii: ",")) { continue }
                return expect(close)
            }
        }

        private mutating func digits() -> Int {
            let start = index
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: an integer when it has neither
        /// fraction nor exponent and fits an `Int`.
        private mutating func number() -> Value? {
            let start = index
            _ = expect(UInt8(ascii: "-"))
            guard let first = current else { return nil }
            if first == UInt8(ascii: "0") {
                index += 1
            } else if digits() == 0 {
                return nil
            }
            var integral = true
            if expect(UInt8(ascii: ".")) {
                integral = false
                guard digits() > 0 else { return nil }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                integral = false
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return nil }
            }
            guard integral else { return .other }
            // Accumulated negatively, so Int.min fits; overflow makes it `.other`.
            let negative = bytes[start] == UInt8(ascii: "-")
            var value = 0
            for byte in bytes[(negative ? start + 1 : start)..<index] {
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = times10.subtractingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
                if o1 || o2 { return .other }
                value = next
            }
            if negative { return .integer(value) }
            return value == Int.min ? .other : .integer(-value)
        }

        /// A string, unescaped; nil when it is not valid JSON (unescaped control characters,
        /// bad escapes, lone surrogates, invalid UTF-8, no closing quote).
        mutating func string() -> String? {
            guard expect(UInt8(ascii: "\"")) else { return nil }
            let start = index
            var escaped = false
            while true {
                guard let byte = current else { return nil }
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 { return nil }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    index += 2
                } else {
                    index += 1
                }
            }
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
            index += 1
            guard escaped else { return UTF8Text.string(raw) }
            return Self.unescape(raw)
        }

        private static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
            var out: [UInt8] = []
            out.reserveCapacity(raw.count)
            var i = 0
            func hex4(_ at: Int) -> UInt32? {
                guard at + 4 <= raw.count else { return nil }
                var value: UInt32 = 0
                for byte in raw[at..<(at + 4)] {
                    let digit: UInt8
                    switch byte {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                    default: return nil
                    }
                    value = value << 4 | UInt32(digit)
                }
                return value
            }
            while i < raw.count {
                let byte = raw[i]
                guard byte == UInt8(ascii: "\\") else {
                    out.append(byte)
                    i += 1
                    continue
                }
                guard i + 1 < raw.count else { return nil }
                switch raw[i + 1] {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): out.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4(i + 2) else { return nil }
                    i += 6
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard i + 1 < raw.count, raw[i] == UInt8(ascii: "\\"), raw[i + 1] == UInt8(ascii: "u"),
                            let low = hex4(i + 2), (0xDC00..<0xE000).contains(low)
                        else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        return nil
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    UTF8.encode(unicode) { out.append($0) }
                    continue
                default:
                    return nil
                }
                i += 2
            }
            return UTF8Text.string(out)
        }
    }
}
