/// Validation of the names and ids that go into Reddit paths, queries and forms: what passes
/// is safe in a URL, and anything else is a typed error naming the rule, never a malformed URL.
public enum RedditNames {
    /// The kinds a fullname may carry: t1 comment, t2 account, t3 post, t4 message, t5 subreddit,
    /// t6 award.
    public static let kinds = ["t1", "t2", "t3", "t4", "t5", "t6"]

    /// A subreddit name, `[A-Za-z0-9_]{2,21}`, or several joined by `+` (`swift+iOSProgramming`),
    /// which Reddit serves as one combined listing.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)``.
    public static func subreddit(_ name: String, field: String = "subreddit") throws(RedditError) -> String {
        let parts = name.split(separator: "+", omittingEmptySubsequences: false)
        let valid =
            !parts.isEmpty
            && parts.allSatisfy { part in
                (2...21).contains(part.utf8.count) && part.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
            }
        guard valid else {
            throw .invalidInput(field: field, value: name, rule: "2 to 21 letters, digits or underscores (several joined by +)")
        }
        return name
    }

    /// A single subreddit name, `[A-Za-z0-9_]{2,21}`: what `about` and `subscribe` take.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)``.
    public static func singleSubreddit(_ name: String, field: String = "subreddit") throws(RedditError) -> String {
        guard !name.contains("+") else {
            throw .invalidInput(field: field, value: name, rule: "one subreddit, not several joined by +")
        }
        return try subreddit(name, field: field)
    }

    /// A username: 1 to 20 letters, digits, `_` or `-`.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)``.
    public static func username(_ name: String, field: String = "username") throws(RedditError) -> String {
        let valid =
            (1...20).contains(name.utf8.count)
            && name.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
        guard valid else { throw .invalidInput(field: field, value: name, rule: "1 to 20 letters, digits, _ or -") }
        return name
    }

    /// A thing's base-36 id without its kind (`1abc1`): 1 to 13 lowercase letters or digits.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)``.
    public static func id(_ id: String, field: String = "id") throws(RedditError) -> String {
        guard isBase36(Substring(id)) else { throw .invalidInput(field: field, value: id, rule: "a base-36 id: 1 to 13 lowercase letters or digits") }
        return id
    }

    /// A fullname, `t<kind>_<id>` (`t3_1abc1`), optionally restricted to some kinds.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)``.
    public static func fullname(_ name: String, kinds allowed: [String] = kinds, field: String = "id") throws(RedditError) -> String {
        let parts = name.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, allowed.contains(String(parts[0])), isBase36(parts[1]) else {
            throw .invalidInput(
                field: field, value: name, rule: "a fullname like \(allowed.first ?? "t3")_1abc2 (kinds \(allowed.joined(separator: ", ")))")
        }
        return name
    }

    /// A thing's id given as `1abc1` or as the fullname `t3_1abc1`, returned without the kind.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)``.
    public static func bareID(_ text: String, kind: String, field: String) throws(RedditError) -> String {
        if text.hasPrefix(kind + "_") {
            return String(try fullname(text, kinds: [kind], field: field).dropFirst(kind.count + 1))
        }
        return try id(text, field: field)
    }

    /// A search query: 1 to 512 characters, not only spaces (Reddit's own limit on `q`).
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)``.
    public static func query(_ text: String, field: String = "q") throws(RedditError) -> String {
        guard !text.allSatisfy(\.isWhitespace), text.count <= 512 else {
            throw .invalidInput(field: field, value: String(text.prefix(40)), rule: "1 to 512 characters, not only spaces")
        }
        return text
    }

    private static func isBase36(_ text: Substring) -> Bool {
        (1...13).contains(text.utf8.count)
            && text.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
