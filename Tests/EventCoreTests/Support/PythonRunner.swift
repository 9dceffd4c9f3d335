import Foundation

/// Runs python3 scripts for the interop tests, with a deadline and no leftover process.
enum PythonRunner {
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    enum Failure: Error, CustomStringConvertible {
        case timedOut(seconds: Double, arguments: [String])

        var description: String {
            switch self {
            case .timedOut(let seconds, let arguments): "python3 \(arguments.joined(separator: " ")) did not finish in \(seconds) s"
            }
        }
    }

    /// Whether `python3` can import every module named.
    static func canImport(_ modules: String...) -> Bool {
        let output = try? run(["-c", "import " + modules.joined(separator: ", ")], input: Data(), timeout: 60)
        return output?.status == 0
    }

    /// Runs `python3 arguments...` with `input` on stdin.
    static func run(_ arguments: [String], input: Data, timeout: Double = 60) throws -> Output {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("eventcore-py-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inURL = scratch.appendingPathComponent("stdin")
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        try input.write(to: inURL)
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let stdin = try FileHandle(forReadingFrom: inURL)
        let stdout = try FileHandle(forWritingTo: outURL)
        let stderr = try FileHandle(forWritingTo: errURL)
        defer {
            try? stdin.close()
            try? stdout.close()
            try? stderr.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            _ = finished.wait(timeout: .now() + 10)
            throw Failure.timedOut(seconds: timeout, arguments: arguments)
        }
        return Output(
            status: process.terminationStatus, stdout: try Data(contentsOf: outURL),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}
