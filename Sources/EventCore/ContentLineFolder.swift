/// Folds content lines at 75 octets (RFC 5545 §3.1) without splitting a UTF-8 sequence.
enum ContentLineFolder {
    static let maxOctets = 75

    /// The line as CRLF-terminated physical lines; each continuation starts with one space,
    /// which counts toward its 75 octets.
    static func fold(_ line: String) -> String {
        var result = ""
        var used = 0
        for scalar in line.unicodeScalars {
            let size = UTF8.width(scalar)
            if used + size > maxOctets {
                result += "\r\n "
                used = 1
            }
            result.unicodeScalars.append(scalar)
            used += size
        }
        return result + "\r\n"
    }
}
