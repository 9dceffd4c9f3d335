import Bus
import BusBench
import BusZMQ
import Foundation

/// The C baselines of `busctl bench`: the `CBaseline` executable built by the package next to
/// `busctl` (Sources/CBaseline/main.c), plain libzmq in C with every role in a process of its own.
/// Each call runs one measurement and decodes the one JSON line it prints.
enum CBaseline {
    /// What one run prints; which fields are present depends on the mode.
    struct Result: Decodable {
        var rate: Double?
        var lost: Int?
        var cut: Int?
        var p50: Double?
        var p99: Double?
        var p999: Double?
    }

    /// The executable beside this `busctl`.
    static var binary: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("CBaseline")
    }

    /// PUB -> zmq_proxy -> `subscribers` SUBs with high-water marks `hwm` (0: none), the publisher
    /// sending the bus's event frames for a `size`-byte payload. Delivered messages/s in total,
    /// messages lost, and how many subscribers stopped at the end of their window with messages
    /// still queued (their unread messages are not counted as lost).
    static func pubsub(size: Int, subscribers: Int, hwm: Int, seconds: Double, port: Int) throws -> (rate: Double, lost: Int, cut: Int) {
        let result = try run(
            "pubsub", seconds: seconds, port: port, frames: RawBaseline.eventFrames(size: size, seq: 1),
            extra: ["--subscribers", String(subscribers), "--hwm", String(hwm)])
        guard let rate = result.rate, let lost = result.lost else { throw CommandFailure("CBaseline pubsub printed no rate") }
        return (rate, lost, result.cut ?? 0)
    }

    /// REQ -> ROUTER/DEALER zmq_proxy -> REP, one `size`-byte request at a time: p50, p99 and
    /// p99.9 latencies in microseconds.
    static func latency(size: Int, seconds: Double, port: Int) throws -> (p50: Double, p99: Double, p999: Double) {
        let result = try run("latency", seconds: seconds, port: port, frames: [[UInt8](repeating: 0x61, count: size)])
        guard let p50 = result.p50, let p99 = result.p99, let p999 = result.p999 else {
            throw CommandFailure("CBaseline latency printed no percentiles")
        }
        return (p50, p99, p999)
    }

    /// DEALER with `inFlight` requests outstanding, each `[""]` then `request` -> zmq_proxy -> REP:
    /// requests per second.
    static func throughput(request: Frames, inFlight: Int, seconds: Double, port: Int) throws -> Double {
        let result = try run("throughput", seconds: seconds, port: port, frames: request, extra: ["--in-flight", String(inFlight)])
        guard let rate = result.rate else { throw CommandFailure("CBaseline throughput printed no rate") }
        return rate
    }

    private static func run(_ mode: String, seconds: Double, port: Int, frames: Frames, extra: [String] = []) throws -> Result {
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw CommandFailure("the C baseline \(binary.path) is not built (swift build builds it with busctl)")
        }
        let hex = frames.map { frame in frame.map { String(format: "%02x", $0) }.joined() }.joined(separator: ",")
        let process = Process()
        process.executableURL = binary
        process.arguments = [mode, "--port", String(port), "--seconds", String(seconds), "--frames", hex] + extra
        // stdout through a pipe read to its end; stderr into a file, so a child that fills the
        // stderr pipe's buffer cannot block while this side waits on stdout.
        let output = Pipe()
        let errorsURL = FileManager.default.temporaryDirectory.appendingPathComponent("cbaseline-\(UUID().uuidString).err")
        guard FileManager.default.createFile(atPath: errorsURL.path, contents: nil), let errors = try? FileHandle(forWritingTo: errorsURL)
        else {
            throw CommandFailure("cannot create \(errorsURL.path) for the C baseline's errors")
        }
        defer { try? FileManager.default.removeItem(at: errorsURL) }
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            try? errors.close()
            throw error
        }
        try? errors.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let reason = String(decoding: (try? Data(contentsOf: errorsURL)) ?? Data(), as: UTF8.self)
        guard process.terminationStatus == 0, let result = try? JSONDecoder().decode(Result.self, from: data) else {
            throw CommandFailure(
                "CBaseline \(mode) failed (status \(process.terminationStatus)): \(reason.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return result
    }
}
