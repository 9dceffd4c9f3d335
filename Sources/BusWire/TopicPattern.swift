/// A subscription pattern over dotted topic names, NATS-style: `*` matches exactly one token,
/// `>` (last token only) matches one or more remaining tokens; anything else is literal.
///
/// On the wire a subscription is a byte prefix; ``wirePrefix`` is the longest literal prefix of
/// the pattern, and ``matches(_:)`` filters exactly on top of it.
public struct TopicPattern: Hashable, Sendable, CustomStringConvertible {
    public let text: String
    /// The tokens as matched: literal bytes, `*` or `>`, so matching compares bytes only.
    private let parts: [Part]

    private enum Part: Hashable, Sendable {
        case literal([UInt8])
        case one
        case rest
    }

    private static func parts(_ tokens: [Substring]) -> [Part] {
        tokens.map { token in token == ">" ? .rest : token == "*" ? .one : .literal(Array(token.utf8)) }
    }

    /// Parses a pattern. Throws ``BusError/invalidTopic(_:reason:)`` for an empty token,
    /// a `>` that is not last, or characters outside `[a-z0-9_-]`.
    public init(_ text: String) throws(BusError) {
        if text == ">" || text.isEmpty {
            self.text = ">"
            self.parts = [.rest]
            return
        }
        let tokens = text.split(separator: ".", omittingEmptySubsequences: false)
        for (index, token) in tokens.enumerated() {
            if token.isEmpty { throw .invalidTopic(text, reason: "empty token") }
            if token == ">" {
                if index != tokens.count - 1 { throw .invalidTopic(text, reason: "'>' must be the last token") }
                continue
            }
            if token == "*" { continue }
            if !Topic.isValidToken(token) {
                throw .invalidTopic(text, reason: "tokens use only a-z, 0-9, '_' and '-'")
            }
        }
        self.text = text
        self.parts = Self.parts(tokens)
    }

    public var description: String { text }

    /// True when the pattern has no wildcard.
    public var isLiteral: Bool {
        !parts.contains {
            if case .literal = $0 { return false }
            return true
        }
    }

    /// The byte prefix to subscribe to on a SUB socket: every literal token before the first
    /// wildcard, with its trailing dot (`feed.*.voted` -> `feed.`); the whole topic when literal.
    public var wirePrefix: [UInt8] {
        if isLiteral { return Array(text.utf8) }
        var prefix: [UInt8] = []
        for case .literal(let bytes) in parts.prefix(while: { if case .literal = $0 { true } else { false } }) {
            prefix += bytes
            prefix.append(UInt8(ascii: "."))
        }
        return prefix
    }

    /// Whether `topic` matches the pattern (no allocation: walks the UTF-8 bytes).
    public func matches(_ topic: String) -> Bool {
        if isFullWildcard { return true }
        var topic = topic
        return topic.withUTF8 { bytes in
            var position = 0
            for (index, part) in parts.enumerated() {
                if case .rest = part { return position < bytes.count || index == 0 }
                guard position <= bytes.count else { return false }
                // The topic's next token: [position, end).
                var end = position
                while end < bytes.count && bytes[end] != UInt8(ascii: ".") { end += 1 }
                switch part {
                case .literal(let literal):
                    guard literal.count == end - position else { return false }
                    for offset in 0..<literal.count where literal[offset] != bytes[position + offset] { return false }
                case .one:
                    if end == position { return false }
                case .rest:
                    break
                }
                position = end + 1
            }
            return position == bytes.count + 1
        }
    }

    private var isFullWildcard: Bool { parts.count == 1 && parts[0] == .rest }
}

/// Topic names: lowercase dotted tokens, `<service>.<noun>[.<verb>]`.
public enum Topic {
    /// Longest topic accepted, in bytes.
    public static let maxLength = 255

    static func isValidToken(_ token: Substring) -> Bool {
        !token.isEmpty
            && token.utf8.allSatisfy { c in
                (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2D
            }
    }

    /// Checks a concrete topic name (no wildcards), without allocating: it runs on every
    /// publish.
    public static func validate(_ topic: String) throws(BusError) {
        var topic = topic
        let problem: String? = topic.withUTF8 { bytes in
            if bytes.isEmpty { return "empty" }
            if bytes.count > maxLength { return "longer than \(maxLength) bytes" }
            var tokenLength = 0
            for c in bytes {
                if c == UInt8(ascii: ".") {
                    if tokenLength == 0 { break }
                    tokenLength = 0
                    continue
                }
                let ok = (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2D
                if !ok { tokenLength = -1; break }
                tokenLength += 1
            }
            return tokenLength > 0 ? nil : "tokens are non-empty and use only a-z, 0-9, '_' and '-'"
        }
        if let problem { throw .invalidTopic(topic, reason: problem) }
    }
}
