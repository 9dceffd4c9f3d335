import BusWire
import BusZMQ
import Foundation

/// Who may publish, subscribe, call and serve what, NATS-style: per identity, allow and deny
/// lists of topic patterns (`*` one token, `>` the rest); deny wins; anything not allowed is
/// denied. Identities are the names the kernel's ZAP handler gives connections (the file name
/// of the public key in `authorized/`), never a field of a message.
///
/// File format (JSON):
/// ```json
/// {
///   "defaults":   { "publish": {"allow": ["{name}.>"]}, "subscribe": {"allow": [">"]},
///                   "call": {"allow": [">"], "deny": ["auth.token", "bus.reload"]},
///                   "serve": {"allow": ["{name}"]} },
///   "identities": { "feed": { "call": {"allow": [">"], "deny": ["bus.reload"]} } }
/// }
/// ```
/// `{name}` stands for the identity. An identity's section for a verb replaces the default's
/// section for that verb. Call subjects are `service.method` (`auth.token`, `bus.stats`);
/// serve subjects are service names.
public struct Policy: Equatable, Sendable {
    public enum Verb: String, CaseIterable, Sendable {
        case publish, subscribe, call, serve
    }

    public struct Rules: Equatable, Sendable, Codable {
        public var allow: [String]
        public var deny: [String]

        public init(allow: [String] = [], deny: [String] = []) {
            self.allow = allow
            self.deny = deny
        }

        enum CodingKeys: String, CodingKey { case allow, deny }
        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            allow = try c.decodeIfPresent([String].self, forKey: .allow) ?? []
            deny = try c.decodeIfPresent([String].self, forKey: .deny) ?? []
        }
    }

    public var defaults: [Verb: Rules]
    public var identities: [String: [Verb: Rules]]

    public init(defaults: [Verb: Rules], identities: [String: [Verb: Rules]] = [:]) {
        self.defaults = defaults
        self.identities = identities
    }

    /// The default policy: a service publishes under its own name, reads everything, serves
    /// its own name, and may call everything but `auth.token`, `bus.reload` and
    /// `events.handover`; `feed` may also call `auth.token` (the one service `busctl up` lets
    /// `auth` hand the token to); only `events` may call `events.handover` (a starting instance
    /// asks the running one to step down, so any other caller could stop the service); `busctl`
    /// (the operator) may also publish anywhere and call `bus.reload`.
    public static let builtIn = Policy(
        defaults: [
            .publish: Rules(allow: ["{name}.>"]),
            .subscribe: Rules(allow: [">"]),
            .call: Rules(allow: [">"], deny: ["auth.token", "bus.reload", "events.handover"]),
            .serve: Rules(allow: ["{name}"]),
        ],
        identities: [
            "feed": [.call: Rules(allow: [">"], deny: ["bus.reload", "events.handover"])],
            "events": [.call: Rules(allow: [">"], deny: ["auth.token", "bus.reload"])],
            "busctl": [
                .publish: Rules(allow: [">"]),
                .call: Rules(allow: [">"], deny: ["auth.token", "events.handover"]),
                .serve: Rules(),
            ],
        ])

    /// Reads a policy file; unknown verbs and invalid patterns are errors naming the place.
    public static func load(_ url: URL) throws(SecurityError) -> Policy {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw .unreadable(url.path, reason: "missing")
        }
        return try decode(data, name: url.path)
    }

    /// Reads the bytes of a policy file; `name` is the file named in errors.
    public static func decode(_ data: Data, name: String) throws(SecurityError) -> Policy {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw .badPolicy("\(name) is not a JSON object")
        }
        func rules(_ value: Any?, at place: String) throws(SecurityError) -> [Verb: Rules] {
            guard let value else { return [:] }
            guard let dict = value as? [String: Any] else { throw .badPolicy("\(place) is not an object") }
            var result: [Verb: Rules] = [:]
            for (key, section) in dict {
                guard let verb = Verb(rawValue: key) else {
                    throw .badPolicy("\(place).\(key): unknown verb (use publish, subscribe, call, serve)")
                }
                guard let sectionDict = section as? [String: Any] else { throw .badPolicy("\(place).\(key) is not an object") }
                var r = Rules()
                for (listName, list) in sectionDict {
                    guard let patterns = list as? [String] else { throw .badPolicy("\(place).\(key).\(listName) is not a list of strings") }
                    for pattern in patterns {
                        let probe = pattern.replacingOccurrences(of: "{name}", with: "x")
                        guard (try? TopicPattern(probe)) != nil else {
                            throw .badPolicy("\(place).\(key).\(listName): '\(pattern)' is not a valid pattern")
                        }
                    }
                    switch listName {
                    case "allow": r.allow = patterns
                    case "deny": r.deny = patterns
                    default: throw .badPolicy("\(place).\(key).\(listName): use allow or deny")
                    }
                }
                result[verb] = r
            }
            return result
        }
        var policy = Policy(defaults: try rules(object["defaults"], at: "defaults"))
        if let identities = object["identities"] as? [String: Any] {
            for (name, value) in identities { policy.identities[name] = try rules(value, at: "identities.\(name)") }
        }
        return policy
    }

    /// The rules for one identity, patterns compiled.
    public func compiled(for identity: String) -> CompiledRules {
        var result: [Verb: (allow: [TopicPattern], deny: [TopicPattern])] = [:]
        for verb in Verb.allCases {
            let rules = identities[identity]?[verb] ?? defaults[verb] ?? Rules()
            func compile(_ list: [String]) -> [TopicPattern] {
                list.compactMap { try? TopicPattern($0.replacingOccurrences(of: "{name}", with: identity)) }
            }
            result[verb] = (compile(rules.allow), compile(rules.deny))
        }
        return CompiledRules(rules: result)
    }
}

/// One identity's rules, ready to check.
public struct CompiledRules: Sendable {
    let rules: [Policy.Verb: (allow: [TopicPattern], deny: [TopicPattern])]

    /// Whether `subject` (a topic, `service.method`, or a service name) is allowed for `verb`.
    public func allows(_ verb: Policy.Verb, _ subject: String) -> Bool {
        guard let r = rules[verb] else { return false }
        if r.deny.contains(where: { $0.matches(subject) }) { return false }
        return r.allow.contains { $0.matches(subject) }
    }

    /// Whether a wire subscription prefix is allowed: an allow pattern must cover every topic
    /// the prefix can deliver (`feed.>` covers `feed.` and `feed.post`; `>` covers everything;
    /// a pattern covers a prefix that is itself a topic it matches), and no deny pattern may
    /// match any of them.
    public func allowsSubscription(prefix: String) -> Bool {
        guard let r = rules[.subscribe] else { return false }
        if r.deny.contains(where: { Self.mayOverlap($0, prefix) }) { return false }
        return r.allow.contains { Self.covers($0, prefix) }
    }

    package static func covers(_ pattern: TopicPattern, _ prefix: String) -> Bool {
        if pattern.text == ">" { return true }
        if (try? Topic.validate(prefix)) != nil, pattern.matches(prefix) { return true }
        guard pattern.text.hasSuffix(".>") else { return false }
        let head = String(pattern.text.dropLast(1))  // "feed."
        return !head.contains("*") && prefix.hasPrefix(head)
    }

    package static func mayOverlap(_ pattern: TopicPattern, _ prefix: String) -> Bool {
        let literal = String(decoding: pattern.wirePrefix, as: UTF8.self)
        return literal.hasPrefix(prefix) || prefix.hasPrefix(literal)
    }
}
