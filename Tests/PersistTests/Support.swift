import Bus
import BusTestSupport
import Foundation

@testable import PersistCore

/// A fresh folder under the system temp directory, removed by `remove()`.
struct TempDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("persist-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var database: String { url.appendingPathComponent("persist.sqlite").path }

    func remove() { try? FileManager.default.removeItem(at: url) }

    /// Runs `body` with a new folder and always removes it.
    static func with(_ body: (TempDirectory) async throws -> Void) async throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        try await body(dir)
    }
}

/// A lock-guarded value closures can share (Bus's pthread-based `Locked`, visible to TSan).
final class Shared<Value: Sendable>: Sendable {
    private let lock: Locked<Value>
    init(_ value: Value) { lock = Locked(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&$0) } }
    var value: Value { lock.withLock { $0 } }
}

/// Collects an engine's events in the background.
final class EngineEvents: Sendable {
    let reports = Shared<[CommitReport]>([])
    let failures = Shared<[WriteFailure]>([])
    let others = Shared<[String]>([])
    private let task: Task<Void, Never>

    init(_ engine: PersistEngine) {
        let reports = self.reports
        let failures = self.failures
        let others = self.others
        task = Task {
            for await event in engine.events {
                switch event {
                case .committed(let report): reports.withLock { $0.append(report) }
                case .writeFailed(let failure): failures.withLock { $0.append(failure) }
                case .recovered: others.withLock { $0.append("recovered") }
                case .compacted: others.withLock { $0.append("compacted") }
                case .corruptRecord: others.withLock { $0.append("corrupt_record") }
                case .abandoned: others.withLock { $0.append("abandoned") }
                }
            }
        }
    }

    var committedEvents: Int { reports.value.reduce(0) { $0 + $1.events } }

    func waitForCommitted(_ count: Int, timeout: Duration = .seconds(10)) async -> Bool {
        await eventually(timeout: timeout) { self.committedEvents >= count }
    }

    func stop() { task.cancel() }
}

func event(
    _ topic: String, seq: UInt64, value: Int, instance: String = "svc-1", flags: EventMeta.Flags = [.retained],
    time: UInt64? = nil, origin: EventOrigin = .live, stored: UInt64? = nil
) -> StoredEvent {
    let meta = EventMeta(flags: flags, seq: seq, timestampMicros: time ?? (1_700_000_000_000_000 + seq), source: "svc", instance: instance)
    return StoredEvent(
        topic: topic, meta: meta, payload: Array("{\"value\":\(value)}".utf8),
        storedMicros: stored ?? WallClock.microsNow(), origin: origin)
}

func configuration(_ dir: TempDirectory) -> PersistEngine.Configuration {
    var config = PersistEngine.Configuration(path: dir.database)
    config.retryInitial = .milliseconds(20)
    config.retryMax = .milliseconds(100)
    return config
}
