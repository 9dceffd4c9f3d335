extension RedditUserAgent {
    /// Parses `<platform>:<app ID>:<version> (by /u/<user>)`, the form Reddit asks for.
    /// - Throws: ``RedditError/invalidInput(field:value:rule:)`` for any other form.
    public init(parsing text: String) throws(RedditError) {
        let rule = "<platform>:<app ID>:<version> (by /u/<username>)"
        guard text.hasSuffix(")"), let open = text.range(of: " (by /u/") else {
            throw .invalidInput(field: "user_agent", value: text, rule: rule)
        }
        let head = text[..<open.lowerBound].split(separator: ":", omittingEmptySubsequences: false)
        let username = String(text[open.upperBound..<text.index(before: text.endIndex)])
        guard head.count == 3 else { throw .invalidInput(field: "user_agent", value: text, rule: rule) }
        try self.init(platform: String(head[0]), appID: String(head[1]), version: String(head[2]), username: username)
    }
}
