import Bus
import Foundation

/// What one `observe` stream delivered, checked against the library's promise: the current
/// value first, then only newer values (no duplicate), every gap flagged.
struct ObservedStream: Codable, Sendable {
    var topic: String
    var deliveries = 0
    /// The seq the kernel held just before the stream began, and the first value's seq and
    /// origin: the promise is a first value at least as new as that one (the retained value, or
    /// a live change that overtook its fetch).
    var startSeq: UInt64 = 0
    var firstSeq: UInt64?
    var firstOrigin: String?
    /// A value whose seq was not above the previous one.
    var duplicates = 0
    /// Jumps in seq on live values (each healed by a re-fetch in the library).
    var gaps = 0
    var healed = 0
    var lastSeq: UInt64 = 0
    var startedBehind: Bool { firstSeq.map { $0 < startSeq } ?? true }
    /// The seq the kernel held at the end, and whether the stream reached it.
    var finalSeq: UInt64?
    var converged: Bool?
}

/// Observers of state topics of every domain service, for the whole run.
final class Observers: Sendable {
    static let topics = ["weather.state", "auth.state", "events.me", "feed.user", "events.index"]
    private let streams = Locked<[String: ObservedStream]>([:])
    private let tasks = Locked<[Task<Void, Never>]>([])
    private let client: BusClient

    init(stack: Stack) {
        client = stack.client("chaos-observer")
    }

    /// A JSON value of any shape (only seqs and origins are checked).
    struct AnyJSON: Decodable, Sendable {
        init(from decoder: Decoder) throws {}
    }

    func start() async throws {
        for topic in Self.topics {
            let current = (try? await client.retained(topic, timeout: .seconds(2)))?.meta.seq ?? 0
            streams.withLock { $0[topic] = ObservedStream(topic: topic, startSeq: current) }
            let stream = try client.observe(topic, as: AnyJSON.self)
            let streams = self.streams
            let task = Task {
                for await value in stream {
                    streams.withLock { all in
                        var s = all[topic]!
                        if s.firstSeq == nil {
                            s.firstSeq = value.seq
                            s.firstOrigin = "\(value.origin)"
                        }
                        if s.deliveries > 0 {
                            if value.seq <= s.lastSeq { s.duplicates += 1 }
                            if value.seq > s.lastSeq + 1, value.origin == .live { s.gaps += 1 }
                        }
                        if value.origin == .healed { s.healed += 1 }
                        s.deliveries += 1
                        s.lastSeq = max(s.lastSeq, value.seq)
                        all[topic] = s
                    }
                }
            }
            tasks.withLock { $0.append(task) }
        }
    }

    /// Waits (up to `timeout`) until every stream reached the seq the kernel holds now.
    func converge(timeout: Duration) async {
        let probe = client
        var finals: [String: UInt64] = [:]
        for topic in Self.topics {
            if let seq = (try? await probe.retained(topic, timeout: .seconds(2)))?.meta.seq { finals[topic] = seq }
        }
        let streams = self.streams
        _ = await Stack.until(timeout) {
            streams.withLock { all in finals.allSatisfy { all[$0.key]!.lastSeq >= $0.value } }
        }
        streams.withLock { all in
            for (topic, seq) in finals {
                all[topic]!.finalSeq = seq
                all[topic]!.converged = all[topic]!.lastSeq >= seq
            }
        }
    }

    func stop() async {
        for task in tasks.withLock({ $0 }) { task.cancel() }
        await client.close()
    }

    var results: [ObservedStream] { streams.withLock { all in Self.topics.compactMap { all[$0] } } }
}
