import Foundation

/// Percent-encoding of user input for URL paths, queries and `application/x-www-form-urlencoded`
/// bodies: only RFC 3986 unreserved characters stay as they are.
enum PercentEncoding {
    /// Encodes every byte outside `A-Z a-z 0-9 - . _ ~`; a space becomes `+` in form bodies and
    /// `%20` elsewhere.
    static func encode(_ text: String, spaceAsPlus: Bool = false) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " ") where spaceAsPlus:
                output += "+"
            default:
                output += "%"
                output += hexDigits[Int(byte >> 4)]
                output += hexDigits[Int(byte & 0x0F)]
            }
        }
        return output
    }

    /// A path segment: as ``encode(_:spaceAsPlus:)`` but `+` stays, since it joins subreddit
    /// names in `/r/a+b` and is a legal path character.
    static func pathSegment(_ text: String) -> String {
        encode(text).replacingOccurrences(of: "%2B", with: "+")
    }

    /// `a=1&b=2` in the given order, for a URL query.
    static func query(_ fields: [(String, String)]) -> String {
        fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }

    /// `a=1&b=2` in the given order, for a form body.
    static func form(_ fields: [(String, String)]) -> String {
        fields.map { "\(encode($0.0, spaceAsPlus: true))=\(encode($0.1, spaceAsPlus: true))" }.joined(separator: "&")
    }

    private static let hexDigits = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
}
