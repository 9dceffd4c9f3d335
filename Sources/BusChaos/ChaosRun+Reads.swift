import Bus
import Foundation

/// Reading the state back: the keys the clients wrote, what `persist` holds.
extension ChaosRun {
    struct EventIndex: Decodable {
        struct Entry: Decodable { var id: String; var key: String }
        var events: [Entry]
    }

    struct EventItem: Decodable {
        var liked_by: [String]
        var going: [String]
        var waitlist: [String]
    }

    /// `events.item.<key>` of the run's events.
    func itemTopics(_ client: BusClient) async throws -> [String] {
        guard let index = try await client.retained("events.index", timeout: .seconds(5)) else { throw ChaosFailure("no events.index") }
        let entries = try JSONDecoder().decode(EventIndex.self, from: Data(index.payload)).events
        return entries.filter { Workload.eventIDs.contains($0.id) }.map { "events.item.\($0.key)" }
    }

    /// Every key's value now: weather's followed cities (its `following`), auth's session (its
    /// `state`), the user's likes and places (the retained items `events` restored).
    func readState(_ client: BusClient, user: String) async throws -> [String: String] {
        var state: [String: String] = [:]
        struct Following: Decodable {
            struct City: Decodable { var id: Int }
            var cities: [City]
        }
        let following = try await Self.retrying("weather.following") { () async throws(BusError) -> ReplyBody in
            try await client.call("weather", "following", payload: Array("{}".utf8), timeout: .seconds(5))
        }
        let followed = Set(try JSONDecoder().decode(Following.self, from: Data(following.payload)).cities.map(\.id))
        for city in Workload.cities { state["weather/\(city)"] = followed.contains(city) ? "followed" : "unfollowed" }

        struct Auth: Decodable { var state: String }
        let auth = try await Self.retrying("auth.state") { () async throws(BusError) -> ReplyBody in
            try await client.call("auth", "state", payload: Array("{}".utf8), timeout: .seconds(5))
        }
        state["auth/session"] = try JSONDecoder().decode(Auth.self, from: Data(auth.payload)).state == "authenticated" ? "in" : "out"

        var index: EventIndex?
        _ = await Stack.until(.seconds(15)) {
            index = (try? await client.retained("events.index", timeout: .seconds(2))).flatMap {
                try? JSONDecoder().decode(EventIndex.self, from: Data($0.payload))
            }
            return index.map { Set($0.events.map(\.id)).isSuperset(of: Workload.eventIDs) } == true
        }
        guard let index else { throw ChaosFailure("events.index does not list the run's events") }
        for entry in index.events where Workload.eventIDs.contains(entry.id) {
            var item: EventItem?
            _ = await Stack.until(.seconds(15)) {
                item = (try? await client.retained("events.item.\(entry.key)", timeout: .seconds(2))).flatMap {
                    try? JSONDecoder().decode(EventItem.self, from: Data($0.payload))
                }
                return item != nil
            }
            guard let item else { throw ChaosFailure("no retained events.item.\(entry.key)") }
            state["events.like/\(entry.id)"] = item.liked_by.contains(user) ? "yes" : "no"
            state["events.going/\(entry.id)"] = (item.going + item.waitlist).contains(user) ? "yes" : "no"
        }
        return state
    }

    /// Calls until a 200 comes back (15 s at most): a service restarted a moment ago.
    static func retrying(_ what: String, _ call: () async throws(BusError) -> ReplyBody) async throws -> ReplyBody {
        let deadline = ContinuousClock.now + .seconds(15)
        var last = "no answer"
        while ContinuousClock.now < deadline {
            do {
                let reply = try await call()
                if reply.status == 200 { return reply }
                last = "status \(reply.status): \(reply.errorBody.message)"
            } catch {
                last = "\(error)"
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        throw ChaosFailure("\(what) did not answer 200 within 15 s: \(last)")
    }

    /// Topics whose snapshot in `persist` is older than the kernel's value after 15 s.
    func persistBehind(_ client: BusClient, topics: [String]) async -> [String] {
        var behind = Set(topics)
        _ = await Stack.until(.seconds(15)) {
            for topic in behind where await Self.persistHolds(client, topic) { behind.remove(topic) }
            return behind.isEmpty
        }
        return behind.sorted()
    }

    /// Whether `persist`'s snapshot of `topic` is at least as new as the kernel's retained
    /// value (true when the kernel holds none); false when either does not answer.
    static func persistHolds(_ client: BusClient, _ topic: String) async -> Bool {
        struct Stored: Decodable { var seq: UInt64 }
        let retained: RetainedValue?
        do { retained = try await client.retained(topic, timeout: .seconds(2)) } catch { return false }
        guard let kernel = retained?.meta.seq else { return true }
        guard
            let reply = try? await client.call(
                "persist", "restore", payload: Array((try? JSONEncoder().encode(["topic": topic])) ?? Data()), timeout: .seconds(2)),
            reply.status == 200, let stored = try? JSONDecoder().decode(Stored.self, from: Data(reply.payload))
        else { return false }
        return stored.seq >= kernel
    }

    /// Burst events `persist.committed` listed that `persist.history` does not hold.
    func missingCommitted(_ client: BusClient, _ commits: CommitLog) async throws -> Int {
        struct Page: Decodable {
            struct Event: Decodable { var seq: UInt64; var instance: String }
            var events: [Event]
            var next_cursor: Int?
        }
        var missing = 0
        for (topic, seqs) in commits.acknowledged {
            guard let low = seqs.min(), let high = seqs.max() else { continue }
            var present = Set<UInt64>()
            var cursor: Int?
            repeat {
                var body = "{\"topic\":\"\(topic)\",\"from_seq\":\(low),\"to_seq\":\(high),\"limit\":1000"
                if let cursor { body += ",\"cursor\":\(cursor)" }
                body += "}"
                let reply = try await Self.retrying("persist.history") { () async throws(BusError) -> ReplyBody in
                    try await client.call("persist", "history", payload: Array(body.utf8), timeout: .seconds(5))
                }
                let page = try JSONDecoder().decode(Page.self, from: Data(reply.payload))
                for event in page.events where event.instance == commits.client.instance { present.insert(event.seq) }
                cursor = page.next_cursor
            } while cursor != nil
            missing += seqs.subtracting(present).count
        }
        return missing
    }
}
