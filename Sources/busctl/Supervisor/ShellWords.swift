import Bus

/// Splits a command-line string into words the way a POSIX shell does for plain words: blanks
/// separate words; 'single quotes' keep everything; "double quotes" keep everything but
/// backslash escapes of `"`, `\`, `$` and `` ` ``; a backslash outside quotes keeps the next
/// character. No variables, globs or substitutions.
enum ShellWords {
    /// - Throws: ``UsageError`` for an unterminated quote or a trailing backslash.
    static func split(_ text: String) throws(UsageError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n":
                if inWord { words.append(current) }
                current = ""
                inWord = false
            case "'":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" { closed = true; break }
                    current.append(next)
                }
                if !closed { throw UsageError("unterminated ' in '\(text)'") }
            case "\"":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" { closed = true; break }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { break }
                        if !"\"\\$`".contains(escaped) { current.append("\\") }
                        current.append(escaped)
                    } else {
                        current.append(next)
                    }
                }
                if !closed { throw UsageError("unterminated \" in '\(text)'") }
            case "\\":
                guard let escaped = iterator.next() else { throw UsageError("trailing \\ in '\(text)'") }
                inWord = true
                current.append(escaped)
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { words.append(current) }
        return words
    }
}
