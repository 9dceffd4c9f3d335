import Bus
import Foundation

/// A retained topic that shows part of a feature's state: published after every action that
/// changed its value, saved by `persist`, restored at start.
///
/// ```swift
/// StateTopic<State>.value("weather.state") { $0.settings }           // one topic
/// StateTopic<State>.family("weather.forecast",                       // one topic per city
///     keys: { $0.followed.map(String.init) }, value: { $0.forecasts[Int($1)!] })
/// ```
/// Each value must stay under the bus's 1 MiB message limit: large state is many topics plus
/// a small index, not one blob.
public struct StateTopic<State: Sendable>: Sendable {
    /// The topic, or the prefix of a family (`weather.forecast` for `weather.forecast.<key>`).
    public let name: String
    public let isFamily: Bool
    /// Whether the store restores this topic at start (false: published only, as `auth.state`,
    /// whose truth is auth's own token file).
    public let restores: Bool
    /// Topic -> the value's JSON, for the current state.
    let project: @Sendable (State) -> [String: Result<[UInt8], ServiceError>]
    /// The topics to restore, given the state restored so far (a family's keys come from it).
    let restoreTopics: @Sendable (State) -> [String]
    /// Applies one restored value.
    let apply: @Sendable (inout State, String, Data) throws -> Void

    /// The whole state on one topic (the counter's `counter.state`), restored at start unless
    /// `restores` is false.
    public static func state(_ topic: String, restores: Bool = true) -> StateTopic where State: Codable {
        restores ? value(topic, { $0 }, restore: { state, value in state = value }) : value(topic, { $0 })
    }

    /// A projection of the state on one topic. It is restored at start only when `restore` is
    /// given (it writes the saved value back); without it the topic is published, not restored
    /// (`auth.state`, whose truth is auth's own token file).
    ///
    /// - Parameters:
    ///   - topic: the topic (`weather.state`).
    ///   - project: the value to publish.
    ///   - restore: puts a restored value back into the state.
    public static func value<Value: Codable & Sendable>(
        _ topic: String, _ project: @escaping @Sendable (State) -> Value, restore: (@Sendable (inout State, Value) -> Void)? = nil
    ) -> StateTopic {
        StateTopic(
            name: topic, isFamily: false, restores: restore != nil,
            project: { state in [topic: Effect<Never>.encode(project(state), what: "the value of '\(topic)'")] },
            restoreTopics: { _ in [topic] },
            apply: { state, _, data in restore?(&state, try JSONDecoder().decode(Value.self, from: data)) })
    }

    /// One topic per key, `<prefix>.<key>`: published for every key `keys` lists; a key that
    /// disappears is published once more as JSON `null` (removed).
    ///
    /// With `restore`, the members are restored at start for the keys `keys` finds in the state
    /// restored so far: declare first the topic whose restore puts the keys back (an index).
    /// Without it the family is published only (a view derived from other topics).
    ///
    /// - Parameters:
    ///   - prefix: the family's prefix.
    ///   - keys: the keys the state has now (topic tokens: lowercase letters, digits, `_`, `-`);
    ///     a key that is not a valid token is not published (an error is logged and counted).
    ///   - value: the value of one key (nil: not published).
    ///   - restore: puts a restored member back.
    public static func family<Value: Codable & Sendable>(
        _ prefix: String, keys: @escaping @Sendable (State) -> [String], value: @escaping @Sendable (State, String) -> Value?,
        restore: (@Sendable (inout State, String, Value) -> Void)? = nil
    ) -> StateTopic {
        StateTopic(
            name: prefix, isFamily: true, restores: restore != nil,
            project: { state in
                var out: [String: Result<[UInt8], ServiceError>] = [:]
                for key in keys(state) {
                    let topic = "\(prefix).\(key)"
                    guard (try? Topic.validate(topic)) != nil else {
                        out[topic] = .failure(ServiceError(500, "invalid_topic", "'\(topic)' is not a valid topic: the key is not a topic token"))
                        continue
                    }
                    guard let member = value(state, key) else { continue }
                    out[topic] = Effect<Never>.encode(member, what: "the value of '\(topic)'")
                }
                return out
            },
            restoreTopics: { state in keys(state).map { "\(prefix).\($0)" }.filter { (try? Topic.validate($0)) != nil } },
            apply: { state, topic, data in
                let key = String(topic.dropFirst(prefix.count + 1))
                restore?(&state, key, try JSONDecoder().decode(Value.self, from: data))
            })
    }

    /// Whether `topic` is this declaration's (the topic itself, or a member of the family).
    func owns(_ topic: String) -> Bool {
        isFamily ? topic.hasPrefix(name + ".") : topic == name
    }
}

/// What a state topic's publish carries when a family member was removed.
let removedValue: [UInt8] = Array("null".utf8)
