/// TEXT values (RFC 5545 §3.3.11): backslash escapes and comma-separated lists.
enum ICalendarText {
    /// Undoes `\\`, `\;`, `\,`, `\n` and `\N`. Any other escaped character stands for itself
    /// (producers write `\:` though the RFC does not allow it); a trailing lone backslash stays.
    static func unescape(_ raw: String) -> String {
        var result = ""
        var escaping = false
        for character in raw {
            if escaping {
                result.append(character == "n" || character == "N" ? "\n" : character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        if escaping { result.append("\\") }
        return result
    }

    /// Escapes `\`, `;`, `,` and newlines; a CR of a CRLF pair is dropped so `\r\n` is one `\n`.
    static func escape(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case ";": result += "\\;"
            case ",": result += "\\,"
            case "\n": result += "\\n"
            case "\r": continue
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Splits a raw list value at commas that are not escaped, then unescapes each item.
    static func splitList(_ raw: String) -> [String] {
        var items: [String] = []
        var current = ""
        var escaping = false
        for character in raw {
            if escaping {
                current.append("\\")
                current.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "," {
                items.append(unescape(current))
                current = ""
            } else {
                current.append(character)
            }
        }
        if escaping { current.append("\\") }
        items.append(unescape(current))
        return items
    }
}
