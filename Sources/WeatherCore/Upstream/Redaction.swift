import Foundation

/// Removes API keys from text that may reach a log or an error reply.
public enum Redaction {
    /// What a redacted key reads as.
    public static let placeholder = "REDACTED"

    /// The URL as a string with the value of every `appid` query parameter replaced.
    public static func redact(_ url: URL) -> String {
        redact(url.absoluteString)
    }

    /// The text with the value of every `appid=` parameter replaced (case-insensitive), wherever
    /// it appears: in a URL, an error message or a body excerpt.
    public static func redact(_ text: String) -> String {
        guard text.range(of: "appid=", options: .caseInsensitive) != nil else { return text }
        var result = ""
        var rest = Substring(text)
        while let match = rest.range(of: "appid=", options: .caseInsensitive) {
            result += rest[..<match.upperBound]
            let valueEnd = rest[match.upperBound...].firstIndex(where: { !isValueCharacter($0) }) ?? rest.endIndex
            if valueEnd > match.upperBound { result += placeholder }
            rest = rest[valueEnd...]
        }
        return result + rest
    }

    /// What a key or its percent-encoded form is made of: unreserved characters and `%`.
    private static func isValueCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "-._~%+".contains(character))
    }

    /// The first `limit` characters of a body as one line, redacted, for error messages.
    static func excerpt(of body: Data, limit: Int = 200) -> String {
        if body.isEmpty { return "(empty body)" }
        // Redact before cutting, so a cut never leaves part of a key behind.
        let text = redact(String(decoding: body.prefix(limit * 8), as: UTF8.self))
        let oneLine = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return oneLine.count > limit ? String(oneLine.prefix(limit)) + "…" : oneLine
    }
}
