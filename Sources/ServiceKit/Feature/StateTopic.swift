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

    /// The whole state on one topic (the counter's `counter.state`).
    public static func state(_ topic: String, restores: Bool = true) -> StateTopic where State: Codable {
        value(topic, restores: restores, { $0 }, restore: { state, value in state = value })
    }

    /// A projection of the state on one topic; `restore` writes a saved value back.
    ///
    /// - Parameters:
    ///   - topic: the topic (`weather.state`).
    ///   - restores: false to publish without restoring.
    ///   - project: the value to publish.
    ///   - apply: puts a restored value back into the state.
    public static func value<Value: Codable & Sendable>(
        _ topic: String, restores: Bool = true, _ project: @escaping @Sendable (State) -> Value,
        restore apply: @escaping @Sendable (inout State, Value) -> Void = { _, _ in }
    ) -> StateTopic {
        StateTopic(
            name: topic, isFamily: false, restores: restores,
            project: { state in [topic: Effect<Never>.encode(project(state), what: "the value of '\(topic)'")] },
            restoreTopics: { _ in [topic] },
            apply: { state, _, data in apply(&state, try JSONDecoder().decode(Value.self, from: data)) })
    }

    /// One topic per key, `<prefix>.<key>`: published for every key `keys` lists; a key that
    /// disappears is published once more as JSON `null` (removed), and is not restored.
    ///
    /// - Parameters:
    ///   - prefix: the family's prefix.
    ///   - keys: the keys the state has now (topic tokens: lowercase letters, digits, `_`, `-`).
    ///   - value: the value of one key (nil: not published).
    ///   - apply: puts a restored value back; called for the keys `keys` lists in the restored
    ///     state, so restore the topic that holds the index first.
    public static func family<Value: Codable & Sendable>(
        _ prefix: String, keys: @escaping @Sendable (State) -> [String], value: @escaping @Sendable (State, String) -> Value?,
        restore apply: @escaping @Sendable (inout State, String, Value) -> Void = { _, _, _ in }
    ) -> StateTopic {
        StateTopic(
            name: prefix, isFamily: true, restores: true,
            project: { state in
                var out: [String: Result<[UInt8], ServiceError>] = [:]
                for key in keys(state) {
                    guard let member = value(state, key) else { continue }
                    out["\(prefix).\(key)"] = Effect<Never>.encode(member, what: "the value of '\(prefix).\(key)'")
                }
                return out
            },
            restoreTopics: { state in keys(state).map { "\(prefix).\($0)" } },
            apply: { state, topic, data in
                let key = String(topic.dropFirst(prefix.count + 1))
                apply(&state, key, try JSONDecoder().decode(Value.self, from: data))
            })
    }

    /// Whether `topic` is this declaration's (the topic itself, or a member of the family).
    func owns(_ topic: String) -> Bool {
        isFamily ? topic.hasPrefix(name + ".") : topic == name
    }
}

/// What a state topic's publish carries when a family member was removed.
let removedValue: [UInt8] = Array("null".utf8)
