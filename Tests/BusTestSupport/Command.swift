import Foundation

/// A short command run to its end (`ip`, `tc`, `mount`): its output, or an error with its
/// standard error. Waits without blocking a thread of the cooperative pool.
public enum Command {
    /// Runs `executable` with `arguments`; returns its standard output; throws when it exits
    /// non-zero or runs past `timeout` (then it is killed).
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(10)) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        let output = Output()
        let ended = AsyncStream<Void>.makeStream()
        let remaining = Counter(3)
        let done: @Sendable () -> Void = { if remaining.decrement() == 0 { ended.continuation.finish() } }
        OutputReader.start(stdout.fileHandleForReading, onData: { output.append($0, error: false) }, onEnd: done)
        OutputReader.start(stderr.fileHandleForReading, onData: { output.append($0, error: true) }, onEnd: done)
        process.terminationHandler = { _ in done() }
        do {
            try process.run()
        } catch {
            try? stdout.fileHandleForWriting.close()
            try? stderr.fileHandleForWriting.close()
            throw CommandError("\(executable) could not start: \(error)")
        }
        let pid = process.processIdentifier
        let timer = Task {
            try await Task.sleep(for: timeout)
            kill(pid, SIGKILL)
        }
        for await _ in ended.stream {}
        timer.cancel()
        let line = ([executable] + arguments).joined(separator: " ")
        guard process.terminationReason == .exit else {
            throw CommandError("\(line) was killed (signal \(process.terminationStatus)) after \(timeout)")
        }
        guard process.terminationStatus == 0 else {
            throw CommandError("\(line) failed (exit \(process.terminationStatus)): \(output.text(error: true))")
        }
        return output.text(error: false)
    }

    /// Both outputs, appended by the reader threads.
    private final class Output: @unchecked Sendable {
        // @unchecked: every access holds `lock`.
        private let lock = NSLock()
        private var out = Data()
        private var err = Data()
        func append(_ data: Data, error: Bool) { lock.withLock { if error { err.append(data) } else { out.append(data) } } }
        func text(error: Bool) -> String { lock.withLock { String(decoding: error ? err : out, as: UTF8.self) } }
    }

    private final class Counter: @unchecked Sendable {
        // @unchecked: every access holds `lock`.
        private let lock = NSLock()
        private var value: Int
        init(_ value: Int) { self.value = value }
        func decrement() -> Int {
            lock.withLock {
                value -= 1; return value
            }
        }
    }
}

/// A short command that failed; the message has its command line and standard error.
public struct CommandError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
