import Foundation

/// How much history `persist` keeps, per topic prefix: a maximum age and a maximum number of
/// events per topic. The latest snapshot of a topic is never removed by retention.
///
/// Written as `PREFIX=AGE:COUNT[,PREFIX=AGE:COUNT...]`, e.g. `feed.=7d:10000,auth.=30d:1000,*=30d:10000`.
/// The longest matching prefix wins; `*` matches every topic. AGE is a number with `s`, `m`,
/// `h` or `d`, COUNT a whole number; `-` (or `0`) means no limit of that kind.
public struct RetentionPolicy: Equatable, Sendable, CustomStringConvertible {
    public struct Rule: Equatable, Sendable {
        /// Topic prefix; empty matches every topic (`*`).
        public var prefix: String
        /// Events older than this (by the time `persist` stored them) are removed.
        public var maxAgeSeconds: UInt64?
        /// At most this many events per topic are kept (the newest).
        public var maxEvents: Int?

        public init(prefix: String, maxAgeSeconds: UInt64?, maxEvents: Int?) {
            self.prefix = prefix
            self.maxAgeSeconds = maxAgeSeconds
            self.maxEvents = maxEvents
        }
    }

    public var rules: [Rule]

    /// The default: every topic keeps 30 days and at most 10,000 events.
    public static let standard = RetentionPolicy(rules: [Rule(prefix: "", maxAgeSeconds: 30 * 86_400, maxEvents: 10_000)])

    public init(rules: [Rule]) {
        self.rules = rules
    }

    /// Parses the option text. Throws a message naming the part that is wrong.
    public init(parsing text: String) throws(RetentionPolicy.ParseError) {
        var rules: [Rule] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: true) {
            let item = part.trimmingCharacters(in: .whitespaces)
            guard let eq = item.lastIndex(of: "=") else {
                throw ParseError("retention rule '\(item)' is not PREFIX=AGE:COUNT")
            }
            var prefix = String(item[..<eq])
            if prefix == "*" || prefix == ">" { prefix = "" }
            let limits = item[item.index(after: eq)...].split(separator: ":", omittingEmptySubsequences: false)
            guard limits.count == 2 else { throw ParseError("retention rule '\(item)': limits are AGE:COUNT, e.g. 7d:10000 or -:500") }
            let age = try Self.parseAge(String(limits[0]), rule: item)
            let count = try Self.parseCount(String(limits[1]), rule: item)
            if rules.contains(where: { $0.prefix == prefix }) {
                throw ParseError("retention prefix '\(prefix.isEmpty ? "*" : prefix)' is given twice")
            }
            rules.append(Rule(prefix: prefix, maxAgeSeconds: age, maxEvents: count))
        }
        if rules.isEmpty { throw ParseError("retention '\(text)' has no rule") }
        self.rules = rules
    }

    /// The rule for `topic`: the longest matching prefix.
    public func rule(for topic: String) -> Rule? {
        var best: Rule?
        for rule in rules where topic.hasPrefix(rule.prefix) {
            if best == nil || rule.prefix.count > best!.prefix.count { best = rule }
        }
        return best
    }

    public var description: String {
        rules.map { rule in
            let age = rule.maxAgeSeconds.map(Self.formatAge) ?? "-"
            let count = rule.maxEvents.map(String.init) ?? "-"
            return "\(rule.prefix.isEmpty ? "*" : rule.prefix)=\(age):\(count)"
        }.joined(separator: ",")
    }

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    static func parseAge(_ text: String, rule: String) throws(ParseError) -> UInt64? {
        if text == "-" || text == "0" || text.isEmpty { return nil }
        let units: [Character: UInt64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last, let factor = units[unit], let number = UInt64(text.dropLast()), number > 0 else {
            throw ParseError("retention rule '\(rule)': age '\(text)' is not a number with s, m, h or d (e.g. 7d)")
        }
        return number * factor
    }

    static func parseCount(_ text: String, rule: String) throws(ParseError) -> Int? {
        if text == "-" || text == "0" || text.isEmpty { return nil }
        guard let number = Int(text), number > 0 else {
            throw ParseError("retention rule '\(rule)': count '\(text)' is not a whole number")
        }
        return number
    }

    static func formatAge(_ seconds: UInt64) -> String {
        if seconds % 86_400 == 0 { return "\(seconds / 86_400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}
