import Bus
import BusTestSupport
import Foundation

extension Binaries {
    /// The events service executable.
    static var eventService: String { path("EventService") }
}

/// The `events` wire types as another process reads them (snake_case JSON, only the fields the
/// tests look at).
enum EventsWire {
    struct Event: Codable, Equatable, Sendable {
        var id: String
        var title: String
        var status: String
        var capacity: Int?
        var like_count: Int
        var going_count: Int
        var waitlist_count: Int
    }

    struct Item: Codable, Equatable, Sendable {
        var event: Event
        var liked_by: [String]
        var going: [String]
        var waitlist: [String]
    }

    struct Index: Codable, Sendable {
        struct Entry: Codable, Sendable {
            var id: String
            var key: String
        }
        var count: Int
        var events: [Entry]
    }

    struct User: Codable, Equatable, Sendable {
        var user: String?
        var liked: [String]
        var going: [String]
        var waitlisted: [String]
    }

    struct Mine: Codable, Sendable {
        var user: String
        var liked: [Event]
        var going: [Event]
        var waitlisted: [Event]
    }

    struct RSVP: Codable, Equatable, Sendable {
        var id: String
        var user: String
        var status: String
        var waitlist_position: Int?
        var going_count: Int
        var waitlist_count: Int
    }

    struct Like: Codable, Equatable, Sendable {
        var id: String
        var user: String
        var liked: Bool
        var like_count: Int
    }

    struct Import: Codable, Sendable {
        struct Skip: Codable, Sendable {
            var reason: String
        }
        var imported: [String]
        var updated: [String]
        var skipped: [Skip]
    }

    struct List: Codable, Sendable {
        var count: Int
        var events: [Event]
    }

    /// A calendar of `count` one-off events starting `days` days from now, one hour apart:
    /// `<prefix>-<n>@it.test`, the first with `capacity`.
    static func calendar(prefix: String, count: Int, days: Int = 2, capacity: Int? = nil) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let start = Date().addingTimeInterval(Double(days) * 86_400).timeIntervalSince1970.rounded(.down)
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//swiftbus//integration//EN"]
        for n in 1...count {
            let begin = Date(timeIntervalSince1970: start + Double(n) * 3600)
            lines += [
                "BEGIN:VEVENT", "UID:\(prefix)-\(n)@it.test", "DTSTAMP:20250101T000000Z", "DTSTART:\(formatter.string(from: begin))",
                "DTEND:\(formatter.string(from: begin.addingTimeInterval(3600)))", "SUMMARY:\(prefix) \(n)", "CATEGORIES:Music",
            ]
            if n == 1, let capacity { lines.append("X-SWIFTBUS-CAPACITY:\(capacity)") }
            lines.append("END:VEVENT")
        }
        lines.append("END:VCALENDAR")
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

extension Harness {
    /// Starts `EventService` on `stateDirectory` and waits until the kernel lists its pid.
    func startEvents(stateDirectory: URL, arguments: [String] = []) async throws -> TestProcess {
        try await admit("events")
        let process = try spawn(Binaries.eventService, ["--state-dir", stateDirectory.path] + arguments, name: "events")
        let registered = await eventually(timeout: .seconds(20)) {
            ((try? await self.instances(of: "events")) ?? []).contains { $0.pid == Int(process.pid) } || !process.isRunning
        }
        guard registered, process.isRunning else { throw HarnessError("events did not register; stderr:\n\(process.stderr)") }
        return process
    }

    /// Starts `AuthService` with the local provider on `stateDirectory`.
    func startLocalAuth(stateDirectory: URL) async throws -> TestProcess {
        try await admit("auth")
        let process = try spawn(Binaries.authService, ["--state-dir", stateDirectory.path], name: "auth")
        let registered = await eventually(timeout: .seconds(20)) {
            ((try? await self.instances(of: "auth")) ?? []).contains { $0.pid == Int(process.pid) } || !process.isRunning
        }
        guard registered, process.isRunning else { throw HarnessError("auth did not register; stderr:\n\(process.stderr)") }
        return process
    }

    /// Signs `user` in through `auth` (signing out whoever was signed in) and waits until
    /// `events` acts as that user.
    func signIn(_ user: String) async throws {
        let caller = client(name: "tester")
        let _: LogoutReply = try await caller.request("auth", "logout", NoInput(), timeout: .seconds(10))
        let _: AuthStateValue = try await caller.request("auth", "login", ["username": user, "password": "correct horse"], timeout: .seconds(15))
        let seen = await eventually(timeout: .seconds(10)) {
            let mine: EventsWire.Mine? = try? await caller.request("events", "mine", NoInput(), timeout: .seconds(2))
            return mine?.user == user
        }
        guard seen else { throw HarnessError("events did not see \(user) sign in") }
    }

    /// Registers users with `auth` (password "correct horse").
    func registerUsers(_ users: [String]) async throws {
        struct Registered: Codable { var user: String }
        for user in users {
            let _: Registered = try await client(name: "tester").request("auth", "register", ["username": user, "password": "correct horse"])
        }
    }

    /// The topic key of event `id`, from the retained `events.index`.
    func eventKey(_ id: String) async throws -> String {
        let index = try await client().retained("events.index")
        let decoded = try JSONDecoder().decode(EventsWire.Index.self, from: Data(try requireValue(index, "events.index").payload))
        guard let key = decoded.events.first(where: { $0.id == id })?.key else { throw HarnessError("no '\(id)' in events.index") }
        return key
    }

    /// The retained value of `topic` decoded as `T`, nil when none.
    func retainedValue<T: Decodable>(_ topic: String, as type: T.Type) async -> T? {
        guard let event = try? await client().retained(topic) else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(event.payload))
    }

    /// The value `persist` holds for `topic` decoded as `T`, nil when none.
    func persistedValue<T: Decodable>(_ topic: String, as type: T.Type) async -> T? {
        guard let stored = try? await persistRestore(topic), let payload = stored["payload"],
            let data = try? JSONSerialization.data(withJSONObject: payload)
        else { return nil }
        return try? JSONDecoder().decode(T.self, from: data)
    }
}

/// `value`, or a harness error naming what was missing.
func requireValue<T>(_ value: T?, _ what: String = "a value") throws -> T {
    guard let value else { throw HarnessError("expected \(what)") }
    return value
}
