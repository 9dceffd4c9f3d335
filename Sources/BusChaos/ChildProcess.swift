import Bus
import Foundation

/// One process of the stack: its command line, its log file (appended across restarts) and
/// the running instance, which the nemesis signals and the stack starts again.
final class ChildProcess: @unchecked Sendable {
    // @unchecked: the running `Process` is only touched under `lock`; the rest is immutable.
    let name: String
    let executable: String
    let arguments: [String]
    let environment: [String: String]
    let log: URL
    private let lock = Locked<(process: Process?, starts: Int)>((nil, 0))
    /// How many times it was started.
    var starts: Int { lock.withLock { $0.starts } }

    /// Where this run's part of the log begins (a reused work folder keeps earlier runs' logs).
    private let logStart: UInt64

    init(name: String, executable: String, arguments: [String], environment: [String: String], log: URL) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.log = log
        logStart = ((try? FileManager.default.attributesOfItem(atPath: log.path))?[.size] as? NSNumber)?.uint64Value ?? 0
    }

    var pid: Int32? { lock.withLock { $0.process.flatMap { $0.isRunning ? $0.processIdentifier : nil } } }
    /// The running instance's pid and which start it is (1 = the first), read together.
    var running: (pid: Int32, instance: Int)? {
        lock.withLock { state in state.process.flatMap { $0.isRunning ? ($0.processIdentifier, state.starts) : nil } }
    }
    var isRunning: Bool { lock.withLock { $0.process?.isRunning ?? false } }

    /// Starts a new instance; output goes to the end of the log file.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if !FileManager.default.fileExists(atPath: log.path) { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        _ = handle.seekToEndOfFile()
        handle.write(Data("---- start \(Date()) ----\n".utf8))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        // Forgotten once it exits, so killAll never signals a pid the system gave to another.
        process.terminationHandler = { ended in Self.started.withLock { _ = $0.remove(ended.processIdentifier) } }
        try process.run()
        Self.started.withLock { _ = $0.insert(process.processIdentifier) }
        lock.withLock {
            $0.process = process
            $0.starts += 1
        }
    }

    func signal(_ number: Int32) {
        if let pid { kill(pid, number) }
    }

    /// Waits until the instance exited; false at the deadline.
    func waitForExit(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// SIGCONT (it may be paused), SIGTERM, then SIGKILL after `grace`.
    func stop(grace: Duration = .seconds(3)) async {
        guard isRunning else { return }
        signal(SIGCONT)
        signal(SIGTERM)
        if await !waitForExit(timeout: grace) {
            signal(SIGKILL)
            _ = await waitForExit(timeout: .seconds(3))
        }
    }

    /// Every pid this process started that has not exited yet, for ``killAll()``.
    private static let started = Locked<Set<Int32>>([])

    /// SIGKILL of every process the run started that may still be running (the run was
    /// interrupted): the services stop by themselves when the run dies (`BUS_EXIT_WITH_PARENT`),
    /// the Python upstreams would not.
    static func killAll() {
        for pid in started.withLock({ $0 }) {
            kill(pid, SIGCONT)
            kill(pid, SIGKILL)
        }
    }

    /// The crashes its log records since this run began, one line each: every "Program
    /// crashed: ..." the Swift runtime printed (an abort, a bad pointer), with the instance's
    /// "Assertion failed: ..." before it when there is one (libzmq's asserts print one), and an
    /// assertion no crash report followed (backtraces turned off). The log is read, not the exit
    /// status: the runtime takes seconds to print a backtrace, and a process still printing when
    /// the run kills it would count as killed.
    func crashes() -> [String] {
        // No log: the process was never started.
        guard FileManager.default.fileExists(atPath: log.path) else { return [] }
        guard let handle = try? FileHandle(forReadingFrom: log) else { return ["\(name): its log \(log.path) cannot be read"] }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: logStart)) != nil, let data = try? handle.readToEnd() else {
            return ["\(name): its log \(log.path) cannot be read"]
        }
        var found: [String] = []
        // The last assertion of the running instance not yet reported (a start line begins the next).
        var assertion: String?
        func reportAssertion() {
            if let assertion { found.append("\(name) stopped at an assertion (\(log.lastPathComponent)): \(assertion)") }
            assertion = nil
        }
        // After a crash report, the rest of the instance is its backtrace and memory dumps.
        var crashed = false
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("---- start") {
                reportAssertion()
                crashed = false
            }
            if !crashed, line.contains("Assertion failed:") { assertion = line.trimmingCharacters(in: .whitespaces) }
            guard line.hasPrefix("*** Program crashed:") || line.hasPrefix("💣 Program crashed:") else { continue }
            var report = "\(name) crashed (\(log.lastPathComponent)): " + line.trimmingCharacters(in: CharacterSet(charactersIn: "*💣 "))
            if let assertion { report += ", after \(assertion)" }
            found.append(report)
            assertion = nil
            crashed = true
        }
        reportAssertion()
        return found
    }

    /// SIGKILL and wait for the exit.
    func crash() async {
        guard isRunning else { return }
        signal(SIGKILL)
        _ = await waitForExit(timeout: .seconds(5))
    }
}
