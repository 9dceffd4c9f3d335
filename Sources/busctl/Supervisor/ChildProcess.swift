import Bus
import Foundation

/// What to run: an executable, its arguments and the environment added to ours.
struct ProgramSpec: Sendable, Equatable {
    /// The supervised name (`kernel`, `auth`, ...): the log prefix and the bus service name.
    var name: String
    var executable: String
    var arguments: [String]
    var environment: [String: String] = [:]
}

/// Why a process could not be started.
struct SpawnError: Error, CustomStringConvertible {
    let description: String
}

/// A child process started with `posix_spawn`: its own process group (a terminal's Ctrl-C
/// reaches only the supervisor, which then stops children in order), default signal
/// dispositions and an empty signal mask whatever the supervisor ignores, standard input from
/// /dev/null, standard output and error read line by line on a dedicated thread, and a second
/// thread that waits for its exit. No blocking call runs on Swift's cooperative pool.
final class ChildProcess: Sendable {
    let spec: ProgramSpec
    let pid: pid_t
    let started: ContinuousClock.Instant
    let startedAt: Date
    private let state = Locked(State())

    private struct State {
        var exit: ProcessExit?
        var waiters: [Int: CheckedContinuation<ProcessExit?, Never>] = [:]
        var nextWaiter = 0
        var claimed = false
        var lastLines: [String] = []
    }

    /// Serializes spawns: the pipes are made close-on-exec after `pipe()`, so no other spawn may
    /// run in between (glibc's `pipe2` is not visible to Swift without _GNU_SOURCE).
    /// (A counter rather than `Locked<Void>`: ThreadSanitizer misreports zero-size values.)
    private static let spawnLock = Locked(0)

    /// Signals whose disposition the child gets back to default (the supervisor ignores some).
    private static let defaultSignals: [Int32] = [
        SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU,
    ]

    private init(spec: ProgramSpec, pid: pid_t) {
        self.spec = spec
        self.pid = pid
        self.started = .now
        self.startedAt = Date()
    }

    /// Starts `spec`.
    /// - Parameters:
    ///   - onLine: every line the child writes to standard output or error, without the newline.
    ///   - onExit: once, after the child ended and was reaped.
    /// - Throws: ``SpawnError`` when the executable cannot be run.
    static func spawn(
        _ spec: ProgramSpec, onLine: @escaping @Sendable (String) -> Void,
        onExit: @escaping @Sendable (ChildProcess, ProcessExit) -> Void
    ) throws(SpawnError) -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in spec.environment { environment[key] = value }
        let argv = [spec.executable] + spec.arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }

        let (pid, outRead, errRead): (pid_t, Int32, Int32) = try spawnLock.withLock { spawns throws(SpawnError) in
            spawns += 1
            var out: [Int32] = [-1, -1]
            var err: [Int32] = [-1, -1]
            guard pipe(&out) == 0 else { throw SpawnError(description: "pipe() failed: \(String(cString: strerror(errno)))") }
            guard pipe(&err) == 0 else {
                let message = String(cString: strerror(errno))
                out.forEach { _ = close($0) }
                throw SpawnError(description: "pipe() failed: \(message)")
            }
            for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, out[1], 1)
            posix_spawn_file_actions_adddup2(&actions, err[1], 2)

            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for number in defaultSignals { sigaddset(&defaults, number) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            var mask = sigset_t()
            sigemptyset(&mask)
            posix_spawnattr_setsigmask(&attributes, &mask)
            posix_spawnattr_setpgroup(&attributes, 0)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

            var pid: pid_t = 0
            let rc = withCStrings(argv) { argv in
                withCStrings(envp) { envp in
                    posix_spawn(&pid, spec.executable, &actions, &attributes, argv, envp)
                }
            }
            _ = close(out[1])
            _ = close(err[1])
            guard rc == 0 else {
                _ = close(out[0])
                _ = close(err[0])
                throw SpawnError(description: "cannot run \(spec.executable): \(String(cString: strerror(rc)))")
            }
            return (pid, out[0], err[0])
        }

        let child = ChildProcess(spec: spec, pid: pid)
        Thread.startNamed("busctl.out.\(spec.name)") {
            pumpLines(from: [outRead, errRead]) { line in
                child.remember(line)
                onLine(line)
            }
        }
        Thread.startNamed("busctl.wait.\(spec.name)") {
            var status: Int32 = 0
            var exit: ProcessExit
            while true {
                if waitpid(pid, &status, 0) == pid {
                    exit = ProcessExit(waitStatus: status)
                    break
                }
                if errno != EINTR {
                    exit = .unknown
                    break
                }
            }
            child.finish(exit)
            onExit(child, exit)
        }
        return child
    }

    /// How it ended, or nil while it runs.
    var exitStatus: ProcessExit? { state.withLock { $0.exit } }
    var isRunning: Bool { exitStatus == nil }
    /// How long it has been running (or ran).
    var uptime: Duration { ContinuousClock.now - started }

    /// The last lines it wrote (for error messages).
    var lastLines: [String] { state.withLock { $0.lastLines } }

    /// Takes responsibility for this process's exit: true for the first caller only. Whoever
    /// stops a process on purpose claims it first, so the crash handler leaves it alone.
    func claim() -> Bool {
        state.withLock { s in
            defer { s.claimed = true }
            return !s.claimed
        }
    }

    /// Sends `number` to the process while it has not been reaped.
    func signal(_ number: Int32) {
        state.withLock { s in
            if s.exit == nil { _ = kill(pid, number) }
        }
    }

    /// Sends SIGKILL to the process and whatever it started in its process group.
    func killGroup() {
        state.withLock { s in
            if s.exit == nil { _ = kill(-pid, SIGKILL) }
        }
    }

    /// Claims the exit, sends SIGTERM, waits up to `grace`, then SIGKILLs the process group.
    /// - Returns: how it ended, and whether it had to be killed.
    func stop(grace: Duration) async -> (exit: ProcessExit?, killed: Bool) {
        _ = claim()
        signal(SIGTERM)
        if let exit = await waitForExit(timeout: grace) { return (exit, false) }
        killGroup()
        return (await waitForExit(timeout: .seconds(5)), true)
    }

    /// Claims the exit, SIGKILLs the process group and waits for it.
    func forceKill() async -> ProcessExit? {
        _ = claim()
        killGroup()
        return await waitForExit(timeout: .seconds(5))
    }

    /// Waits until the process has ended, at most `timeout`; nil if it still runs.
    func waitForExit(timeout: Duration) async -> ProcessExit? {
        if let exit = exitStatus { return exit }
        return await withTaskGroup(of: ProcessExit?.self) { group in
            group.addTask { await self.exited() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? exitStatus
        }
    }

    /// Waits for the exit; nil when the waiting task is cancelled first.
    private func exited() async -> ProcessExit? {
        let id = state.withLock { s in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ProcessExit?, Never>) in
                let ready: ProcessExit?? = state.withLock { s in
                    if let exit = s.exit { return .some(exit) }
                    if Task.isCancelled { return .some(nil) }
                    s.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    private func finish(_ exit: ProcessExit) {
        let waiters = state.withLock { s in
            s.exit = exit
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: exit) }
    }

    private func remember(_ line: String) {
        state.withLock { s in
            s.lastLines.append(line)
            if s.lastLines.count > 5 { s.lastLines.removeFirst() }
        }
    }
}

/// Reads `fds` until each reaches end of file and calls `onLine` per line; closes them. Runs on
/// its own thread (it blocks in `poll`).
private func pumpLines(from fds: [Int32], onLine: (String) -> Void) {
    var open = fds
    var pending: [Int32: [UInt8]] = [:]
    var chunk = [UInt8](repeating: 0, count: 16_384)
    let maxLine = 64 * 1024
    func emit(_ bytes: ArraySlice<UInt8>) {
        var line = String(decoding: bytes, as: UTF8.self)
        if line.hasSuffix("\r") { line.removeLast() }
        onLine(line)
    }
    while !open.isEmpty {
        var polled = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let rc = poll(&polled, nfds_t(polled.count), -1)
        if rc < 0 {
            if errno == EINTR { continue }
            break
        }
        for entry in polled where entry.revents != 0 {
            let n = chunk.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                var buffer = pending[entry.fd, default: []]
                buffer.append(contentsOf: chunk[0..<n])
                var start = buffer.startIndex
                while let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    emit(buffer[start..<newline])
                    start = newline + 1
                }
                buffer.removeSubrange(..<start)
                if buffer.count > maxLine {
                    emit(buffer[...])
                    buffer.removeAll()
                }
                pending[entry.fd] = buffer
            } else if n < 0, errno == EINTR || errno == EAGAIN {
                continue
            } else {
                if let rest = pending.removeValue(forKey: entry.fd), !rest.isEmpty { emit(rest[...]) }
                _ = close(entry.fd)
                open.removeAll { $0 == entry.fd }
            }
        }
    }
    for fd in open { _ = close(fd) }
}

/// Calls `body` with a NULL-terminated C array of `strings`, freed afterwards.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
