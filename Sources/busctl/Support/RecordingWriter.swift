import Bus
import Foundation

/// Appends lines to a file through a buffer that the recording loop fills and a ticker
/// flushes; lock-guarded because both run as separate tasks.
final class RecordingWriter: Sendable {
    private struct State {
        var handle: FileHandle?
        var buffer = Data()
        var written: UInt64 = 0
        var failure: String?
    }

    let path: String
    private let state: Locked<State>

    /// Creates (or with `overwrite`, truncates) the file.
    /// - Throws: ``CommandFailure`` when it exists and `overwrite` is false, or cannot be created.
    init(path: String, overwrite: Bool) throws {
        self.path = path
        if !overwrite, FileManager.default.fileExists(atPath: path) {
            throw CommandFailure("\(path) exists; pass --force to overwrite it")
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CommandFailure("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        state = Locked(State(handle: handle))
    }

    func append(_ line: String) {
        let flushNow = state.withLock { s in
            s.buffer.append(contentsOf: line.utf8)
            s.buffer.append(UInt8(ascii: "\n"))
            return s.buffer.count >= 64 * 1024
        }
        if flushNow { flush() }
    }

    func flush() {
        state.withLock { s in
            guard let handle = s.handle, !s.buffer.isEmpty, s.failure == nil else { return }
            do {
                try handle.write(contentsOf: s.buffer)
                s.written += UInt64(s.buffer.count)
            } catch {
                s.failure = "cannot write \(path): \(error.localizedDescription)"
            }
            s.buffer.removeAll(keepingCapacity: true)
        }
    }

    /// Why writing stopped (disk full, ...), if it did.
    var failure: String? { state.withLock { $0.failure } }

    func close() {
        flush()
        state.withLock { s in
            try? s.handle?.synchronize()
            try? s.handle?.close()
            s.handle = nil
        }
    }
}
