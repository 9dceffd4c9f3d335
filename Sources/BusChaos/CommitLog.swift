import Bus
import Foundation

/// Retained events the run publishes itself (`chaos.burst.<n>`), and which of them `persist`
/// acknowledged as committed (`persist.committed`), for the check after `persist` was killed in
/// the middle of its group commits.
final class CommitLog: Sendable {
    let client: BusClient
    private let committed = Locked<[String: Set<UInt64>]>([:])
    private let published = Locked(0)
    private let task = Locked<Task<Void, Never>?>(nil)

    init(client: BusClient) { self.client = client }

    struct Committed: Decodable {
        struct Entry: Decodable {
            var topic: String
            var instance: String
            var ranges: [[UInt64]]
        }
        var topics: [Entry]
    }

    func start() async throws {
        let subscription = try client.subscribe(["persist.committed"])
        try await subscription.confirm()
        let committed = self.committed
        let instance = client.instance
        task.withLock {
            $0 = Task {
                for await event in subscription {
                    guard let value = try? JSONDecoder().decode(Committed.self, from: Data(event.payload)) else { continue }
                    committed.withLock { map in
                        for entry in value.topics where entry.instance == instance {
                            for range in entry.ranges where range.count == 2 && range[0] <= range[1] {
                                map[entry.topic, default: []].formUnion(range[0]...range[1])
                            }
                        }
                    }
                }
            }
        }
    }

    var acknowledged: [String: Set<UInt64>] { committed.withLock { $0 } }
    var publishedCount: Int { published.withLock { $0 } }

    /// Publishes retained events over `topics` topics without pause and calls `kill` as soon
    /// as `persist` acknowledged the first commit of the burst, while its writer commits the
    /// next batches; stops publishing once `kill` returned (at most `limit` events).
    func burst(limit: Int, topics: Int, kill: @escaping @Sendable () async -> Void) async {
        let before = committed.withLock { $0.values.reduce(0) { $0 + $1.count } }
        let killed = Locked(false)
        let killer = Task {
            _ = await Stack.until(.seconds(5)) { self.committed.withLock { $0.values.reduce(0) { $0 + $1.count } } > before }
            await kill()
            killed.withLock { $0 = true }
        }
        let pad = String(repeating: "x", count: 200)
        for n in 0..<limit where !killed.withLock({ $0 }) {
            let payload = Array("{\"n\":\(n),\"pad\":\"\(pad)\"}".utf8)
            if (try? await client.publish("chaos.burst.\(n % topics)", payload: payload, retain: true)) != nil {
                published.withLock { $0 += 1 }
            }
            if n % 100 == 99 { await Task.yield() }
        }
        await killer.value
    }

    func stop() async {
        task.withLock { $0?.cancel() }
        await client.close()
    }
}
