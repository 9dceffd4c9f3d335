import Bus
import BusSupport
import BusTestSupport
import Foundation

/// Where the package's executables are: `BUS_BIN_DIR`, or the folder of the running test
/// bundle (SwiftPM puts products and the test bundle side by side).
enum Binaries {
    static let directory: URL = {
        if let dir = ProcessInfo.processInfo.environment["BUS_BIN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // On Linux the bundle is `xxxPackageTests.xctest`, an executable in the products folder.
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("busctl").path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    static var busctl: String { path("busctl") }
    static var testService: String { path("BusTestService") }

    /// The package root (for Tests/interop scripts).
    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url = url.deletingLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()
}

/// A child process whose output is captured, and which is always stopped: tests call
/// ``stop()`` in a `defer`, and `deinit` kills what is left.
final class TestProcess: @unchecked Sendable {
    // @unchecked: `process` is only mutated in init; output buffers are Mutex-guarded.
    let name: String
    let process = Process()
    private let stdoutBuffer = Locked(Data())
    private let stderrBuffer = Locked(Data())
    private let exited = Locked<Int32?>(nil)
    /// Output pipes that reached end of file (0, 1 or 2).
    private let drained = Locked(0)

    init(_ executable: String, _ arguments: [String], name: String? = nil, environment: [String: String] = [:], stdin: Data? = nil) throws {
        self.name = name ?? URL(fileURLWithPath: executable).lastPathComponent
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["BUS_LOG_LEVEL"] = env["BUS_LOG_LEVEL"] ?? "info"
        // Every busctl command and service stops when the test process dies without stopping
        // it (a crash, a SIGKILL): no orphans holding ports and CPU (ParentWatch).
        env["BUS_EXIT_WITH_PARENT"] = String(getpid())
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        // Set before `run()`: Foundation calls the handler only if it is set when its manager
        // thread reaps the child, and a child that exits at once (bad arguments, `--help`) could
        // be reaped before the next line ran; its exit was then never reported (the test waited
        // 30 s for a process already gone: seen in parallel runs).
        let exited = self.exited
        process.terminationHandler = { p in exited.withLock { $0 = p.terminationStatus } }
        if let stdin {
            let input = Pipe()
            process.standardInput = input
            try process.run()
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
        } else {
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        Self.read(out.fileHandleForReading, into: stdoutBuffer, drained: drained)
        Self.read(err.fileHandleForReading, into: stderrBuffer, drained: drained)
    }

    private static func read(_ handle: FileHandle, into buffer: Locked<Data>, drained: Locked<Int>) {
        OutputReader.start(handle, onData: { data in buffer.withLock { $0.append(data) } }, onEnd: { drained.withLock { $0 += 1 } })
    }

    var pid: Int32 { process.processIdentifier }
    var stdout: String { String(decoding: stdoutBuffer.withLock { $0 }, as: UTF8.self) }
    var stderr: String { String(decoding: stderrBuffer.withLock { $0 }, as: UTF8.self) }
    var exitStatus: Int32? { exited.withLock { $0 } }
    var isRunning: Bool { exitStatus == nil }
    /// How the process ended: by exit or by a signal.
    var terminationReason: Process.TerminationReason { process.terminationReason }

    /// The Linux scheduler's view of the process (state letter and wait channel), for failure
    /// messages: a process that does not go away is stopped, in uninterruptible I/O, or a zombie.
    var kernelState: String {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "gone"
        let state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? "?"
        let wchan = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "?"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let threads = tasks.sorted().map { task -> String in
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? "?"
            let wchan = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/wchan", encoding: .utf8)) ?? "?"
            return "\(comm.trimmingCharacters(in: .whitespacesAndNewlines)):\(wchan)"
        }
        return "state \(state), wchan \(wchan), threads [\(threads.joined(separator: ", "))]"
    }

    func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// Waits for the process to exit; returns its status, or nil at the deadline. Once it has
    /// exited, also waits (at most a second) until its output pipes are drained, so ``stdout``
    /// and ``stderr`` hold everything it wrote.
    @discardableResult
    func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        var exitSeen: ContinuousClock.Instant?
        while ContinuousClock.now < deadline {
            if let status = exitStatus {
                let now = ContinuousClock.now
                if exitSeen == nil { exitSeen = now }
                if drained.withLock({ $0 }) == 2 || now - exitSeen! > .seconds(1) { return status }
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        if let status = exitStatus {
            await waitForOutput()
            return status
        }
        return nil
    }

    private func waitForOutput() async {
        let deadline = ContinuousClock.now + .seconds(2)
        while drained.withLock({ $0 }) < 2, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// How long ``stop(grace:)`` waits by default: 3 s, 15 s when every process is built with a
    /// sanitizer (BUS_TEST_TSAN, BUS_TEST_ASAN), whose clean exit (persist's checkpoint, say)
    /// takes several times as long.
    static let defaultGrace: Duration = underSanitizer ? .seconds(15) : .seconds(3)

    /// True when every process of the run is built with ThreadSanitizer (BUS_TEST_TSAN) or
    /// AddressSanitizer (BUS_TEST_ASAN): several times slower, so the timing-heavy tests give
    /// them longer heartbeats and deadlines.
    static let underSanitizer: Bool = {
        let environment = ProcessInfo.processInfo.environment
        return environment["BUS_TEST_TSAN"] != nil || environment["BUS_TEST_ASAN"] != nil
    }()

    /// SIGTERM, then SIGKILL after `grace`.
    func stop(grace: Duration = TestProcess.defaultGrace) async {
        guard isRunning else { return }
        signal(SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            signal(SIGKILL)
            await waitForExit(timeout: .seconds(2))
        }
    }

    deinit {
        if exitStatus == nil { kill(process.processIdentifier, SIGKILL) }
    }
}

extension FreePorts {
    /// A base port P with P, P+1 and P+2 free on 127.0.0.1 (a test kernel's endpoints).
    static func kernelBase() -> Int {
        guard let base = kernelBase(in: defaultRange) else { fatalError("no three consecutive free ports found") }
        return base
    }
}
