import Bus
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The clients: each works on its own keys, one call at a time, until stopped, and records
/// every call in the history.
final class Workload: Sendable {
    /// Cities of the embedded GeoNames table: Zurich, Bern, Paris, London.
    static let cities = [2_657_896, 2_661_552, 2_988_507, 2_643_743]
    /// Posts of the local Reddit server's `r/swift` listing.
    static let posts = ["t3_1abc1", "t3_1abc2", "t3_1abc3"]
    /// The calendar the run imports into `events` (one-off events in the future, no capacity).
    static let eventIDs = (1...4).map { "chaos-\($0)@chaos.test" }
    static let deadline: Duration = .seconds(5)
    static let signInDeadline: Duration = .seconds(10)

    let stack: Stack
    let history: History
    private let stopping = Locked(false)
    private let random: Locked<SeededRandom>

    init(stack: Stack, history: History, seed: UInt64) {
        self.stack = stack
        self.history = history
        random = Locked(SeededRandom(seed: seed ^ 0x5EED))
    }

    var isStopping: Bool { stopping.withLock { $0 } }
    func stop() { stopping.withLock { $0 = true } }

    func pick<T>(_ values: [T]) -> T { random.withLock { values[Int.random(in: 0..<values.count, using: &$0)] } }
    func pause(_ range: ClosedRange<Int>) async {
        let ms = random.withLock { Int.random(in: range, using: &$0) }
        try? await Task.sleep(for: .milliseconds(ms))
    }

    /// Signs in through `auth` the way an app does: `startSignIn`, the browser at the local
    /// OAuth server (which redirects to the loopback callback at once), `completeSignIn`.
    /// Recorded as one operation `auth.signin`.
    func signIn(_ client: BusClient, name: String) async {
        let start = history.nowMs
        var outcome = Outcome.unknown
        var status: Int?
        var message: String?
        do {
            let started = try await client.call("auth", "startSignIn", payload: Array("{}".utf8), timeout: Self.deadline)
            status = started.status
            guard Status.isSuccess(started.status) else {
                outcome = (400..<500).contains(started.status) ? .failed : .unknown
                throw ChaosFailure("startSignIn answered \(started.status): \(started.errorBody.message)")
            }
            struct Authorize: Decodable { var authorize_url: String }
            let url = try JSONDecoder().decode(Authorize.self, from: Data(started.payload)).authorize_url
            let (data, response) = try await URLSession(configuration: .ephemeral).data(from: URL(string: url)!)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                outcome = .failed
                throw ChaosFailure("the OAuth server did not redirect to the callback")
            }
            let redirect = String(decoding: data, as: UTF8.self)
            let body = try JSONEncoder().encode(["redirect_url": redirect])
            let completed = try await client.call("auth", "completeSignIn", payload: Array(body), timeout: Self.signInDeadline)
            status = completed.status
            if Status.isSuccess(completed.status) {
                outcome = .ok
            } else {
                outcome = (400..<500).contains(completed.status) ? .failed : .unknown
                message = "\(completed.errorBody.code): \(completed.errorBody.message)"
            }
        } catch {
            message = "\(error)"
        }
        history.append(
            Operation(
                index: 0, client: name, op: "auth.signin", key: "auth/session", value: "in", startMs: start, endMs: history.nowMs,
                deadlineMs: History.ms(Self.deadline + Self.signInDeadline), outcome: outcome, status: status, error: message))
    }

    func signOut(_ client: BusClient, name: String) async {
        await history.record(client: name, op: "auth.logout", key: "auth/session", value: "out", deadline: Self.deadline) {
            () async throws(BusError) -> ReplyBody in
            try await client.call("auth", "logout", payload: Array("{}".utf8), timeout: Self.deadline)
        }
    }

    /// Runs every client until ``stop()``; returns when all have finished their last call.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.weatherClient() }
            group.addTask { await self.eventsClient() }
            group.addTask { await self.authClient() }
            group.addTask { await self.feedClient() }
        }
    }

    private func weatherClient() async {
        let client = stack.client("chaos-weather")
        while !isStopping {
            let city = pick(Self.cities)
            let follow = pick([true, false])
            let method = follow ? "follow" : "unfollow"
            await history.record(
                client: "weather", op: "weather.\(method)", key: "weather/\(city)", value: follow ? "followed" : "unfollowed", deadline: Self.deadline
            ) { () async throws(BusError) -> ReplyBody in
                try await client.call("weather", method, payload: Array("{\"id\":\(city)}".utf8), timeout: Self.deadline)
            }
            await pause(50...250)
        }
        await client.close()
    }

    private func eventsClient() async {
        let client = stack.client("chaos-events")
        while !isStopping {
            let id = pick(Self.eventIDs)
            let yes = pick([true, false])
            if pick([true, false]) {
                let method = yes ? "like" : "unlike"
                await history.record(
                    client: "events", op: "events.\(method)", key: "events.like/\(id)", value: yes ? "yes" : "no", deadline: Self.deadline
                ) {
                    () async throws(BusError) -> ReplyBody in
                    try await client.call("events", method, payload: Array(try Self.json(["id": id])), timeout: Self.deadline)
                }
            } else {
                await history.record(
                    client: "events", op: "events.rsvp", key: "events.going/\(id)", value: yes ? "yes" : "no", deadline: Self.deadline
                ) {
                    () async throws(BusError) -> ReplyBody in
                    try await client.call("events", "rsvp", payload: Array("{\"id\":\"\(id)\",\"going\":\(yes)}".utf8), timeout: Self.deadline)
                }
            }
            await pause(50...250)
        }
        await client.close()
    }

    /// Signs out and in again every few seconds (`events` and `feed` refuse writes meanwhile).
    private func authClient() async {
        let client = stack.client("chaos-auth")
        while !isStopping {
            await pause(4_000...8_000)
            if isStopping { break }
            await signOut(client, name: "auth")
            await pause(200...800)
            await signIn(client, name: "auth")
        }
        await client.close()
    }

    private func feedClient() async {
        let client = stack.client("chaos-feed")
        while !isStopping {
            let post = pick(Self.posts)
            let dir = pick([1, 0, -1])
            await history.record(client: "feed", op: "feed.vote", key: "feed.vote/\(post)", value: String(dir), deadline: Self.deadline) {
                () async throws(BusError) -> ReplyBody in
                try await client.call("feed", "vote", payload: Array("{\"id\":\"\(post)\",\"dir\":\(dir)}".utf8), timeout: Self.deadline)
            }
            await pause(100...400)
        }
        await client.close()
    }

    static func json(_ object: [String: String]) throws(BusError) -> Data {
        do { return try JSONEncoder().encode(object) } catch { throw .invalidPayload("\(error)") }
    }

    /// An iCalendar file of the run's events: one-off, starting in two days, one hour apart.
    static func calendar() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let start = (Date().timeIntervalSince1970 + 2 * 86_400).rounded(.down)
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//swiftbus//chaos//EN"]
        for (n, id) in eventIDs.enumerated() {
            let begin = Date(timeIntervalSince1970: start + Double(n) * 3600)
            lines += [
                "BEGIN:VEVENT", "UID:\(id)", "DTSTAMP:20250101T000000Z", "DTSTART:\(formatter.string(from: begin))",
                "DTEND:\(formatter.string(from: begin.addingTimeInterval(3600)))", "SUMMARY:Chaos \(n + 1)", "CATEGORIES:Music", "END:VEVENT",
            ]
        }
        lines.append("END:VCALENDAR")
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// A step of the run that could not be done; the message says which.
struct ChaosFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
