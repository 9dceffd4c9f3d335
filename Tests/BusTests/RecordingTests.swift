import Foundation
import Testing

@testable import Bus

/// The `busctl record` file format: what the writer's lines give back through the reader, and
/// the line-numbered refusals of what `busctl replay` must not play.
struct RecordingTests {
    static let header = Recording.Header(startedUs: 1_767_225_600_000_000, patterns: ["weather.**"], kernel: "tcp://127.0.0.1:5555")
    static let meta = EventMeta(flags: .retained, seq: 7, timestampMicros: 1_767_225_600_000_100, source: "weather", instance: "weather-1")
        .encode()

    static func file(_ lines: [String]) -> Data { Data((lines.joined(separator: "\n") + "\n").utf8) }

    @Test func writtenLines_readBackTheSameEntries() throws {
        let entries = [
            Recording.Entry(offsetUs: 0, topic: "weather.state", meta: Self.meta, payload: Array(#"{"followed":[]}"#.utf8)),
            Recording.Entry(offsetUs: 1_500, topic: "weather.forecast.2950159", meta: Self.meta, payload: [0x00, 0xFF]),
        ]
        let (header, read) = try Recording.read(Self.file([Self.header.line] + entries.map(\.line) + [""]), name: "r.jsonl")
        #expect(header == Self.header)
        #expect(read == entries)
    }

    @Test func notARecording_isRefusedForTheWholeFile() {
        let problem = "is not a swiftbus recording (its first line is not a {\"format\":\"swiftbus-recording\",...} header)"
        #expect(throws: Recording.ReadError(name: "r.jsonl", line: nil, problem: problem)) {
            try Recording.read(Data("{\"t_us\":0}\n".utf8), name: "r.jsonl")
        }
    }

    @Test func badLines_areRefusedWithTheirLineNumber() throws {
        let good = Recording.Entry(offsetUs: 0, topic: "weather.state", meta: Self.meta, payload: []).line
        let cases: [(String, String)] = [
            ("not json", "not a JSON object"),
            (#"{"topic":"weather.state"}"#, "no t_us offset"),
            (#"{"t_us":-1,"topic":"weather.state"}"#, "no t_us offset"),
            (#"{"t_us":1,"topic":"weather.state","meta_b64":"%%%","payload_b64":""}"#, "meta_b64 is missing or not base64"),
            (#"{"t_us":1,"topic":"weather.state","meta_b64":"AAAA","payload_b64":""}"#, ""),
        ]
        for (line, problem) in cases {
            do {
                _ = try Recording.read(Self.file([Self.header.line, good, line]), name: "r.jsonl")
                Issue.record("accepted \(line)")
            } catch {
                #expect(error.line == 3, "\(line): \(error)")
                if !problem.isEmpty { #expect(error.problem == problem, "\(line)") }
            }
        }
    }

    @Test func otherFormatVersion_isRefusedOnLineOne() {
        let header = #"{"format":"swiftbus-recording","version":2,"protocol":1}"#
        #expect(throws: Recording.ReadError.self) { try Recording.read(Self.file([header]), name: "r.jsonl") }
        do {
            _ = try Recording.read(Self.file([header]), name: "r.jsonl")
        } catch {
            #expect(error.line == 1)
            #expect(error.problem.contains("version 2 is not supported"))
        }
    }
}
