import Bus
import Foundation

/// How a call ended, in the Jepsen sense.
enum Outcome: String, Codable, Sendable {
    /// Acknowledged (2xx): the write happened.
    case ok
    /// Refused (4xx): the write did not happen.
    case failed
    /// A timeout, no connection or a 5xx: the write may or may not have happened, now or later.
    case unknown
}

/// One operation of a client, as the history records it (one JSON line each).
struct Operation: Codable, Sendable {
    var index: Int
    var client: String
    /// `weather.follow`, `events.rsvp`, `auth.signin`, ...
    var op: String
    /// What the write is about (`weather/2657896`, `events.like/<id>`, `auth/session`).
    var key: String
    /// The value the write sets (`followed`, `yes`, `in`, a vote's direction).
    var value: String
    var startMs: Int
    var endMs: Int
    var deadlineMs: Int
    var outcome: Outcome
    var status: Int?
    var error: String?
}

/// The history of the run: every operation, appended to a JSON lines file as it completes.
final class History: Sendable {
    private let operations = Locked<[Operation]>([])
    private let file: Locked<FileHandle?>
    let origin: ContinuousClock.Instant

    init(file url: URL) {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        file = Locked(try? FileHandle(forWritingTo: url))
        origin = .now
    }

    /// Milliseconds since the run began.
    var nowMs: Int { Self.ms(ContinuousClock.now - origin) }

    static func ms(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Runs `call` with `deadline` and records it; returns the reply when it was 2xx.
    @discardableResult
    func record(
        client: String, op: String, key: String, value: String, deadline: Duration, _ call: () async throws(BusError) -> ReplyBody
    ) async -> ReplyBody? {
        let start = nowMs
        var outcome = Outcome.unknown
        var status: Int?
        var message: String?
        var reply: ReplyBody?
        do {
            let answer = try await call()
            status = answer.status
            if Status.isSuccess(answer.status) {
                outcome = .ok
                reply = answer
            } else {
                outcome = (400..<500).contains(answer.status) ? .failed : .unknown
                message = "\(answer.errorBody.code): \(answer.errorBody.message)"
            }
        } catch {
            message = "\(error)"
        }
        append(
            Operation(
                index: 0, client: client, op: op, key: key, value: value, startMs: start, endMs: nowMs, deadlineMs: Self.ms(deadline),
                outcome: outcome, status: status, error: message))
        return reply
    }

    func append(_ operation: Operation) {
        var operation = operation
        operations.withLock {
            operation.index = $0.count
            $0.append(operation)
        }
        if let line = try? JSONEncoder().encode(operation) {
            file.withLock { $0?.write(line + Data("\n".utf8)) }
        }
    }

    var all: [Operation] { operations.withLock { $0 } }

    func close() { file.withLock { try? $0?.close() } }
}
