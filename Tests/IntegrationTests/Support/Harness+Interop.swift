import Bus
import BusTestSupport
import Foundation

/// Hostile and plain pyzmq peers (Tests/interop) and looks into the kernel process, for the
/// kernel-hardening tests.
extension Harness {
    static let interopFolder = Binaries.packageRoot.appendingPathComponent("Tests/interop")

    /// Starts a Tests/interop program against this kernel. With security, `identity` is
    /// admitted first and the program gets `--keys` and `--identity`.
    func interop(_ script: String, _ arguments: [String], identity: String) async throws -> TestProcess {
        var args = [Self.interopFolder.appendingPathComponent(script).path, "--kernel", kernelURL] + arguments
        if let keys {
            try await admit(identity)
            args += ["--keys", keys.path, "--identity", identity]
        }
        return try spawn(Binaries.python, args, name: script)
    }

    /// The JSON lines a program printed so far.
    func jsonLines(_ process: TestProcess) -> [[String: Any]] {
        process.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The kernel's resident memory in bytes (`VmRSS`), nil when it cannot be read.
    func kernelResidentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(kernel.pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// A section of `bus.stats` as a JSON object.
    func kernelStatsSection(_ key: String) async throws -> [String: Any] {
        let stats = try await kernelStats()
        guard let section = stats[key] as? [String: Any] else { throw HarnessError("bus.stats has no '\(key)' object") }
        return section
    }
}
