import Foundation
import Synchronization

/// Polls `condition` until it holds or the deadline passes: tests wait on conditions, never on
/// fixed sleeps.
func eventually(
    timeout: Duration = .seconds(10), every: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    repeat {
        if try await condition() { return true }
        try? await Task.sleep(for: every)
    } while ContinuousClock.now < deadline
    return try await condition()
}

/// A Mutex in a class, so closures can share it.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
    var value: Value { withLock { $0 } }
}

/// A private temporary folder, removed by ``remove()``.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("auth-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
    func remove() { try? FileManager.default.removeItem(at: url) }

    func mode(_ name: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: file(name).path)[.posixPermissions] as? Int) ?? -1
    }

    func contents() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: url.path).sorted() }
}
