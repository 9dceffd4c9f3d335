import Bus
import Foundation
import Synchronization

/// The file `busctl record` writes and `busctl replay` reads: JSON lines, UTF-8.
///
/// The first line is the header:
/// `{"format":"swiftbus-recording","version":1,"protocol":1,"started_us":T,"patterns":[...],"kernel":URL,"busctl":V}`
/// (`protocol` is the event meta version the events were recorded with, `started_us` the Unix
/// time in microseconds when recording began). Every other line is one event as it came off the
/// wire: `{"t_us":OFFSET,"topic":TOPIC,"meta_b64":META,"payload_b64":PAYLOAD}` where `t_us` is
/// microseconds since `started_us` at which busctl received it, and `meta_b64`/`payload_b64`
/// are the meta frame (docs/PROTOCOL.md layout, as received) and the payload bytes in base64,
/// so seq, source, instance, timestamp, flags, content type and correlation ids are all kept.
enum Recording {
    static let format = "swiftbus-recording"
    static let version = 1

    struct Header {
        var startedUs: UInt64
        var patterns: [String]
        var kernel: String
        var protocolVersion = BusVersion.protocolVersion

        var line: String {
            Output.json([
                "format": Recording.format, "version": Recording.version, "protocol": protocolVersion,
                "started_us": startedUs, "patterns": patterns, "kernel": kernel, "busctl": BusVersion.current,
            ] as [String: Any])
        }
    }

    struct Entry {
        var offsetUs: UInt64
        var topic: String
        var meta: [UInt8]
        var payload: [UInt8]

        var line: String {
            "{\"t_us\":\(offsetUs),\"topic\":\(Output.json(topic)),\"meta_b64\":\"\(Data(meta).base64EncodedString())\",\"payload_b64\":\"\(Data(payload).base64EncodedString())\"}"
        }
    }

    /// Reads a whole recording; any problem is exit 65 naming the line.
    static func read(_ data: Data, name: String) throws -> (Header, [Entry]) {
        func bad(_ line: Int, _ problem: String) -> CommandFailure {
            CommandFailure("\(name) line \(line): \(problem)", code: ExitCode.dataError)
        }
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated().makeIterator()
        guard let (_, first) = lines.next(), !first.isEmpty,
            let header = try? JSONSerialization.jsonObject(with: Data(first)) as? [String: Any],
            header["format"] as? String == format
        else {
            throw CommandFailure("\(name) is not a swiftbus recording (its first line is not a {\"format\":\"\(format)\",...} header)", code: ExitCode.dataError)
        }
        guard let fileVersion = (header["version"] as? NSNumber)?.intValue, fileVersion == version else {
            throw bad(1, "recording format version \(header["version"] ?? "none") is not supported (this busctl reads version \(version))")
        }
        guard let protocolVersion = (header["protocol"] as? NSNumber)?.intValue, protocolVersion == BusVersion.protocolVersion else {
            throw bad(1, "events were recorded with protocol \(header["protocol"] ?? "none"); this busctl speaks protocol \(BusVersion.protocolVersion)")
        }
        let parsedHeader = Header(
            startedUs: (header["started_us"] as? NSNumber)?.uint64Value ?? 0, patterns: header["patterns"] as? [String] ?? [],
            kernel: header["kernel"] as? String ?? "", protocolVersion: protocolVersion)
        var entries: [Entry] = []
        while let (index, raw) = lines.next() {
            let number = index + 1
            if raw.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(raw)) as? [String: Any] else {
                throw bad(number, "not a JSON object")
            }
            guard let offset = (object["t_us"] as? NSNumber)?.int64Value, offset >= 0 else { throw bad(number, "no t_us offset") }
            guard let topic = object["topic"] as? String else { throw bad(number, "no topic") }
            do { try Topic.validate(topic) } catch { throw bad(number, error.description) }
            guard let metaText = object["meta_b64"] as? String, let meta = Data(base64Encoded: metaText) else {
                throw bad(number, "meta_b64 is missing or not base64")
            }
            do { _ = try EventMeta.decode(Array(meta)) } catch { throw bad(number, error.description) }
            guard let payloadText = object["payload_b64"] as? String, let payload = Data(base64Encoded: payloadText) else {
                throw bad(number, "payload_b64 is missing or not base64")
            }
            entries.append(Entry(offsetUs: UInt64(offset), topic: topic, meta: Array(meta), payload: Array(payload)))
        }
        return (parsedHeader, entries)
    }
}

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
    private let state: Mutex<State>

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
        state = Mutex(State(handle: handle))
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

/// Events and bytes counted by a recording or replay loop, read by its progress ticker.
final class Tally: Sendable {
    private let counts = Mutex((events: 0, bytes: 0))
    func add(bytes: Int) { counts.withLock { $0.events += 1; $0.bytes += bytes } }
    var events: Int { counts.withLock { $0.events } }
    var bytes: Int { counts.withLock { $0.bytes } }
}
