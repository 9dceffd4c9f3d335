import BusTestSupport
import Foundation

/// The run's own namespaces. As root, `BusChaos` runs itself again inside a private mount
/// namespace (`unshare --mount --propagation private`), where persist's data directory gets a
/// small filesystem of its own (``PersistVolume``) that no other process sees and that goes
/// away with the run's last process, also when the run is killed. With `--net` it first makes
/// two network namespaces joined by a switch (``NetworkNamespaces``): the kernel runs in host 1,
/// everything else (the services, the upstreams, the run and its clients) in host 2, so the
/// nemesis can cut or slow the link between the kernel and its clients. The outer process only
/// waits, forwards SIGINT and SIGTERM, and deletes the namespaces on every way out.
enum Sandbox {
    /// Set in the inner process's environment; with `--net`, the namespaces' names.
    static let marker = "BUS_CHAOS_SANDBOX"
    static let unshare = ["/usr/bin/unshare", "/bin/unshare"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether this process is the inner one.
    static var isInside: Bool { ProcessInfo.processInfo.environment[marker] != nil }

    /// The namespaces the outer process made, read by the inner one (nil without `--net`).
    static var namespaces: NetworkNamespaces? {
        guard let text = ProcessInfo.processInfo.environment[marker], text != "mount" else { return nil }
        let parts = text.split(separator: ",").map(String.init)
        guard parts.count == 4 else { return nil }
        return NetworkNamespaces(switchName: parts[0], hostNames: [parts[1], parts[2]], subnet: parts[3])
    }

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

    /// Runs this program with `arguments` inside a private mount namespace (and, with
    /// `namespaces`, inside their host 2); returns its exit status (128 + the signal when a
    /// signal ended it). SIGINT and SIGTERM are passed on to it.
    static func runInside(arguments: [String], namespaces: NetworkNamespaces?) throws -> Int32 {
        guard let unshare else { throw ChaosFailure("util-linux's `unshare` is not installed") }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        var command = ["--mount", "--propagation", "private", "--"]
        if let namespaces { command += [NetworkNamespaces.ip ?? "ip", "netns", "exec", namespaces.name(2)] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: unshare)
        process.arguments = command + [exe] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment[marker] = namespaces.map { "\($0.switchName),\($0.hostNames[0]),\($0.hostNames[1]),\($0.subnet)" } ?? "mount"
        // The inner run stops (and stops what it started) when this process dies.
        environment["BUS_EXIT_WITH_PARENT"] = String(getpid())
        process.environment = environment
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let child = process.processIdentifier
        // Ignored here, so the sources below receive them and this process lives on to clean up.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
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
