import Foundation

/// `application/x-www-form-urlencoded` (RFC 6749 appendix B): what token requests carry, and
/// how client ids and secrets are encoded before HTTP Basic (RFC 6749 section 2.3.1).
public enum FormEncoding {
    /// Unreserved characters stay; space becomes `+` (or `%20` in a URL query);
    /// everything else is percent-encoded.
    public static func encode(_ text: String, spaceAsPlus: Bool = true) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " ") where spaceAsPlus:
                output += "+"
            default:
                output += String(format: "%%%02X", byte)
            }
        }
        return output
    }

    /// `a=1&b=2`, in the given order.
    public static func body(_ fields: [(String, String)]) -> Data {
        Data(fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&").utf8)
    }

    /// `Basic base64(urlencode(id):urlencode(secret))`.
    public static func basicAuthorization(clientID: String, secret: Secret?) -> String {
        let pair = "\(encode(clientID)):\(encode(secret?.revealed ?? ""))"
        return "Basic " + Data(pair.utf8).base64EncodedString()
    }
}
