import Foundation

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
public enum Recording {
    public static let format = "swiftbus-recording"
    public static let version = 1

    public struct Header: Sendable, Equatable {
        public var startedUs: UInt64
        public var patterns: [String]
        public var kernel: String
        public var protocolVersion = BusVersion.protocolVersion

        public init(startedUs: UInt64, patterns: [String], kernel: String, protocolVersion: Int = BusVersion.protocolVersion) {
            self.startedUs = startedUs
            self.patterns = patterns
            self.kernel = kernel
            self.protocolVersion = protocolVersion
        }

        /// The header line, without its newline.
        public var line: String {
            Recording.json(
                [
                    "format": Recording.format, "version": Recording.version, "protocol": protocolVersion,
                    "started_us": startedUs, "patterns": patterns, "kernel": kernel, "busctl": BusVersion.current,
                ] as [String: Any])
        }
    }

    public struct Entry: Sendable, Equatable {
        public var offsetUs: UInt64
        public var topic: String
        public var meta: [UInt8]
        public var payload: [UInt8]

        public init(offsetUs: UInt64, topic: String, meta: [UInt8], payload: [UInt8]) {
            self.offsetUs = offsetUs
            self.topic = topic
            self.meta = meta
            self.payload = payload
        }

        /// The event's line, without its newline.
        public var line: String {
            "{\"t_us\":\(offsetUs),\"topic\":\(Recording.json(topic)),\"meta_b64\":\"\(Data(meta).base64EncodedString())\",\"payload_b64\":\"\(Data(payload).base64EncodedString())\"}"
        }
    }

    /// Why a recording cannot be read: the file's name, the line (1-based; nil for the file as a
    /// whole) and the problem.
    public struct ReadError: Error, CustomStringConvertible, Equatable {
        public let name: String
        public let line: Int?
        public let problem: String

        public var description: String { line.map { "\(name) line \($0): \(problem)" } ?? "\(name) \(problem)" }
    }

    private static func json(_ value: Any) -> String {
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: options) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads a whole recording, checking every line (its topic against the naming rules, its meta
    /// frame with the wire decoder).
    public static func read(_ data: Data, name: String) throws(ReadError) -> (Header, [Entry]) {
        func bad(_ line: Int, _ problem: String) -> ReadError {
            ReadError(name: name, line: line, problem: problem)
        }
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated().makeIterator()
        guard let (_, first) = lines.next(), !first.isEmpty,
            let header = try? JSONSerialization.jsonObject(with: Data(first)) as? [String: Any],
            header["format"] as? String == format
        else {
            throw ReadError(
                name: name, line: nil, problem: "is not a swiftbus recording (its first line is not a {\"format\":\"\(format)\",...} header)")
        }
        guard let fileVersion = (header["version"] as? NSNumber)?.intValue, fileVersion == version else {
            throw bad(1, "recording format version \(header["version"] ?? "none") is not supported (this busctl reads version \(version))")
        }
        guard let protocolVersion = (header["protocol"] as? NSNumber)?.intValue, protocolVersion == BusVersion.protocolVersion else {
            throw bad(
                1, "events were recorded with protocol \(header["protocol"] ?? "none"); this busctl speaks protocol \(BusVersion.protocolVersion)")
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
            do { try Topic.validate(topic) } catch { throw bad(number, "\(error)") }
            guard let metaText = object["meta_b64"] as? String, let meta = Data(base64Encoded: metaText) else {
                throw bad(number, "meta_b64 is missing or not base64")
            }
            do { _ = try EventMeta.decode(Array(meta)) } catch { throw bad(number, "\(error)") }
            guard let payloadText = object["payload_b64"] as? String, let payload = Data(base64Encoded: payloadText) else {
                throw bad(number, "payload_b64 is missing or not base64")
            }
            entries.append(Entry(offsetUs: UInt64(offset), topic: topic, meta: Array(meta), payload: Array(payload)))
        }
        return (parsedHeader, entries)
    }
}
