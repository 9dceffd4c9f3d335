import Bus

/// Which state topics changed: the JSON last published per topic, compared with the current
/// state's projections. Shared by ``Store`` and the test store.
package struct StateTopicTracker<State: Sendable>: Sendable {
    /// The largest value a state topic may carry: the bus's 1 MiB message limit less room for
    /// the topic and meta frames.
    package static var maxValueBytes: Int { 1_048_576 - 4096 }

    let topics: [StateTopic<State>]
    package private(set) var published: [String: [UInt8]] = [:]

    package init(topics: [StateTopic<State>]) { self.topics = topics }

    /// Records `payload` as what the bus holds for `topic` (a restored value).
    package mutating func markPublished(_ topic: String, _ payload: [UInt8]) { published[topic] = payload }

    /// Marks the current projections as already published.
    package mutating func seed(_ state: State, onlyRestored: Bool = true) {
        for topic in topics where topic.restores || !onlyRestored {
            for (name, value) in topic.project(state) {
                if case .success(let bytes) = value { published[name] = bytes }
            }
        }
    }

    /// The topics whose value differs from the last published one, in declaration order (and
    /// by topic within a family), with removed family members as JSON `null`; and the values
    /// that could not be published (not encodable, over the size limit).
    package mutating func changes(in state: State) -> (publishes: [(topic: String, payload: [UInt8])], errors: [ServiceError]) {
        var publishes: [(topic: String, payload: [UInt8])] = []
        var errors: [ServiceError] = []
        for topic in topics {
            let values = topic.project(state)
            for name in values.keys.sorted() {
                switch values[name]! {
                case .failure(let error):
                    // Not recorded as published: the index of a family never lists a member
                    // the bus does not hold.
                    errors.append(error)
                case .success(let bytes) where bytes.count > Self.maxValueBytes:
                    errors.append(
                        ServiceError(
                            500, "state_too_large", "the value of '\(name)' is \(bytes.count) bytes, over the bus's limit of \(Self.maxValueBytes)"))
                case .success(let bytes):
                    if published[name] != bytes {
                        published[name] = bytes
                        publishes.append((name, bytes))
                    }
                }
            }
            guard topic.isFamily else { continue }
            let gone = published.keys.filter { topic.owns($0) && values[$0] == nil && published[$0] != removedValue }.sorted()
            for name in gone {
                published[name] = removedValue
                publishes.append((name, removedValue))
            }
        }
        return (publishes, errors)
    }
}
