import BusTestSupport
import Foundation

/// The run's own mount namespace. As root, `BusChaos` runs itself again inside a private mount
/// namespace (`unshare --mount --propagation private`), where persist's data directory gets a
/// small filesystem of its own (``PersistVolume``) that no other process sees and that goes
/// away with the run's last process, also when the run is killed. The outer process only
/// waits and forwards SIGINT and SIGTERM.
enum Sandbox {
    /// Set in the inner process's environment.
    static let marker = "BUS_CHAOS_SANDBOX"
    static let unshare = ["/usr/bin/unshare", "/bin/unshare"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether this process is the inner one.
    static var isInside: Bool { ProcessInfo.processInfo.environment[marker] != nil }

    /// Why the run cannot have a mount namespace of its own, nil when it can.
    static func unavailableReason() async -> String? {
        if getuid() != 0 { return "a mount namespace and a tmpfs need root (uid \(getuid()))" }
        guard let unshare else { return "util-linux's `unshare` is not installed" }
        do {
            try await Command.run(unshare, ["--mount", "--propagation", "private", "true"])
        } catch {
            return "cannot create a mount namespace: \(error)"
        }
        return nil
    }

    /// Runs this program with `arguments` inside a private mount namespace; returns its exit status (128 + the signal when a
    /// signal ended it). SIGINT and SIGTERM are passed on to it.
    static func runInside(arguments: [String]) throws -> Int32 {
        guard let unshare else { throw ChaosFailure("util-linux's `unshare` is not installed") }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let command = ["--mount", "--propagation", "private", "--"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: unshare)
        process.arguments = command + [exe] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment[marker] = "mount"
        // The inner run stops (and stops what it started) when this process dies.
        environment["BUS_EXIT_WITH_PARENT"] = String(getpid())
        process.environment = environment
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let child = process.processIdentifier
        let forwards = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { kill(child, number) }
            source.resume()
            return source
        }
        ended.wait()
        forwards.forEach { $0.cancel() }
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }
}
