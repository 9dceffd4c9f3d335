import Foundation

/// The JSON of the kernel's `bus.*` replies, written directly from the dictionaries the methods
/// build, keys sorted by their bytes and slashes unescaped. Foundation's `JSONSerialization`
/// on Linux costs about 100 µs per small object (boxing every number, ICU collation for sorted
/// keys): a 200-topic `bus.stats` page took 20-40 ms of the kernel's thread that way, where this
/// writer takes a fraction of a millisecond. Values it does not know (numbers parsed from a
/// payload, bridged objects) are handed to `JSONSerialization` one by one.
enum ReplyJSON {
    /// The JSON bytes of `value`; nil when some part of it cannot be written as JSON.
    static func encode(_ value: Any) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        return write(value, into: &out) ? out : nil
    }

    /// Raw JSON written as it is (a payload known to be JSON).
    struct Raw {
        let bytes: [UInt8]
    }

    private static func write(_ value: Any, into out: inout [UInt8]) -> Bool {
        // Foundation objects (numbers parsed by JSONSerialization.jsonObject, a Bool among them):
        // only Foundation tells a Bool from a number. Checked by the dynamic type, since on
        // Linux `is NSNumber` holds for a Swift Int too.
        let dynamicType = type(of: value)
        if dynamicType is NSNumber.Type || dynamicType is NSString.Type || dynamicType is NSArray.Type || dynamicType is NSDictionary.Type {
            guard JSONSerialization.isValidJSONObject([value]),
                let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            else { return false }
            out.append(contentsOf: data)
            return true
        }
        switch value {
        case let raw as Raw:
            out.append(contentsOf: raw.bytes)
        case let text as String:
            writeString(text, into: &out)
        case let flag as Bool:
            out.append(contentsOf: flag ? Array("true".utf8) : Array("false".utf8))
        case let number as Int:
            out.append(contentsOf: String(number).utf8)
        case let number as Int64:
            out.append(contentsOf: String(number).utf8)
        case let number as UInt64:
            out.append(contentsOf: String(number).utf8)
        case let number as Int32:
            out.append(contentsOf: String(number).utf8)
        case let number as UInt32:
            out.append(contentsOf: String(number).utf8)
        case let number as UInt:
            out.append(contentsOf: String(number).utf8)
        case let number as Double:
            guard number.isFinite else { return false }
            if number == number.rounded(), abs(number) < 1e15 {
                out.append(contentsOf: String(Int64(number)).utf8)
            } else {
                out.append(contentsOf: "\(number)".utf8)
            }
        case let object as [String: Any]:
            out.append(UInt8(ascii: "{"))
            var first = true
            for key in object.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                guard write(object[key]!, into: &out) else { return false }
            }
            out.append(UInt8(ascii: "}"))
        case let array as [Any]:
            out.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                guard write(element, into: &out) else { return false }
            }
            out.append(UInt8(ascii: "]"))
        case is NSNull:
            out.append(contentsOf: "null".utf8)
        default:
            let mirror = Mirror(reflecting: value)
            guard mirror.displayStyle == .optional else { return false }
            guard let wrapped = mirror.children.first?.value else {
                out.append(contentsOf: "null".utf8)
                return true
            }
            return write(wrapped, into: &out)
        }
        return true
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
