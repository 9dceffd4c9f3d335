import Bus
import Foundation

/// Retained events the run publishes itself (`chaos.burst.<n>`), and which of them `persist`
/// acknowledged as committed (`persist.committed`), for the check after `persist` was killed in
/// the middle of its group commits; and the retained events it publishes while persist's disk
/// is full (`chaos.disk.<n>`), with what persist reported about its writes meanwhile.
final class CommitLog: Sendable {
    let client: BusClient
    private let committed = Locked<[String: Set<UInt64>]>([:])
    private let published = Locked(0)
    private let pressured = Locked(0)
    private let health = Locked(Health())

    /// What persist said about its writes: `persist.error` with `disk_full`, `persist.recovered`.
    struct Health: Sendable {
        var diskFullReports = 0
        var recoveries = 0
    }
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
        let subscription = try client.subscribe(["persist.committed", "persist.error", "persist.recovered"])
        try await subscription.confirm()
        let committed = self.committed
        let health = self.health
        let instance = client.instance
        task.withLock {
            $0 = Task {
                struct Report: Decodable { var code: String? }
                for await event in subscription {
                    if event.topic == "persist.recovered" {
                        health.withLock { $0.recoveries += 1 }
                        continue
                    }
                    if event.topic == "persist.error" {
                        if (try? JSONDecoder().decode(Report.self, from: Data(event.payload)))?.code == "disk_full" {
                            health.withLock { $0.diskFullReports += 1 }
                        }
                        continue
                    }
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
    var pressureCount: Int { pressured.withLock { $0 } }
    var reports: Health { health.withLock { $0 } }

    /// The topics ``pressure(topics:)`` writes.
    static func pressureTopics(_ count: Int) -> [String] { (0..<count).map { "chaos.disk.\($0)" } }

    /// Publishes retained events over ``pressureTopics(_:)`` (about 500 a second, 200-byte
    /// payloads) until the task is cancelled: while the disk is full, persist must write and
    /// fail, and keep them until it can.
    func pressure(topics: Int) -> Task<Void, Never> {
        let pad = String(repeating: "d", count: 200)
        return Task {
            var n = 0
            while !Task.isCancelled {
                for _ in 0..<50 {
                    let payload = Array("{\"n\":\(n),\"pad\":\"\(pad)\"}".utf8)
                    if (try? await client.publish("chaos.disk.\(n % topics)", payload: payload, retain: true)) != nil {
                        pressured.withLock { $0 += 1 }
                    }
                    n += 1
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

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
