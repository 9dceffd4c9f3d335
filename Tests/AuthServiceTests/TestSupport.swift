import Bus
import BusTestSupport
import Foundation

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
