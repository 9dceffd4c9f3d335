import Bus
import Foundation

/// One sample of one running instance of a process (`resources.jsonl`, one JSON line each).
struct ResourceSample: Codable, Sendable {
    /// Milliseconds since the run began.
    var tMs: Int
    var process: String
    /// Which start of the process (1 = the first): a restarted process begins a new series.
    var instance: Int
    var pid: Int32
    /// Resident memory (`VmRSS` of /proc/PID/status).
    var rssKB: Int
    /// Open file descriptors (entries of /proc/PID/fd).
    var fds: Int
    /// `Threads` of /proc/PID/status.
    var threads: Int
}

/// Samples the kernel's and every service's memory, descriptors and threads every few seconds
/// while the run lasts, per instance, into `resources.jsonl`.
final class ResourceWatch: Sendable {
    let processes: [ChildProcess]
    let history: History
    let every: Duration
    private let file: Locked<FileHandle?>
    private let collected = Locked<[ResourceSample]>([])
    private let task = Locked<Task<Void, Never>?>(nil)

    init(processes: [ChildProcess], history: History, file url: URL, every: Duration) {
        self.processes = processes
        self.history = history
        self.every = every
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        file = Locked(try? FileHandle(forWritingTo: url))
    }

    var samples: [ResourceSample] { collected.withLock { $0 } }

    func start() {
        task.withLock {
            $0 = Task {
                while !Task.isCancelled {
                    self.sampleAll()
                    try? await Task.sleep(for: self.every)
                }
            }
        }
    }

    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
        file.withLock { try? $0?.close() }
    }

    private func sampleAll() {
        let now = history.nowMs
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for process in processes {
            guard let running = process.running, let usage = Self.read(pid: running.pid) else { continue }
            let sample = ResourceSample(
                tMs: now, process: process.name, instance: running.instance, pid: running.pid, rssKB: usage.rssKB, fds: usage.fds,
                threads: usage.threads)
            collected.withLock { $0.append(sample) }
            if let line = try? encoder.encode(sample) { file.withLock { $0?.write(line + Data("\n".utf8)) } }
        }
    }

    /// RSS, open descriptors and threads of `pid`; nil when it is gone or a zombie.
    static func read(pid: Int32) -> (rssKB: Int, fds: Int, threads: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var rss: Int?
        var threads: Int?
        for line in status.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2 else { continue }
            if fields[0] == "VmRSS:" { rss = Int(fields[1]) }
            if fields[0] == "Threads:" { threads = Int(fields[1]) }
        }
        guard let rss, let threads, let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count else { return nil }
        return (rss, fds, threads)
    }
}

/// The first and last window of the longest-lived instance of one process, and whether it grew
/// past the bounds (``ResourceBounds``).
struct ResourceGrowth: Codable, Sendable {
    /// Medians over a window of samples.
    struct Window: Codable, Sendable {
        var rssKB: Int
        var fds: Int
        var threads: Int
    }
    var process: String
    var instance: Int
    /// From its first to its last sample.
    var livedMs: Int
    var samples: Int
    var first: Window
    var last: Window
    /// Whether the bounds were applied (a run of at least ``ResourceBounds/minimumRun`` and an
    /// instance watched for at least ``ResourceBounds/minimumLife`` after its warm-up).
    var judged: Bool
    /// What grew past its bound (judged instances only).
    var exceeded: [String]

    /// One line for the table: `27.0 → 27.4 MiB, fds 41 → 41, threads 9 → 9`.
    var figure: String {
        func mib(_ kb: Int) -> String { String(format: "%.1f", Double(kb) / 1024) }
        return "#\(instance) over \(String(format: "%.1f", Double(livedMs) / 60_000)) min: RSS \(mib(first.rssKB)) → \(mib(last.rssKB)) MiB, "
            + "fds \(first.fds) → \(last.fds), threads \(first.threads) → \(last.threads)"
    }
}

/// How much a process may grow between the first and the last window of a long run, and what
/// counts as long. The first 30 s of an instance are its warm-up (connections, caches, the
/// first burst) and not part of its steady state; a window is a minute of samples (a third of
/// what is left when that is shorter), compared by medians so one burst does not decide.
enum ResourceBounds {
    static let warmUpMs = 30_000
    static let windowMs = 60_000
    static let fds = 20
    static let threads = 10
    /// RSS fails only past both: +50 % and +20 MiB.
    static let rssRatio = 0.5
    static let rssKB = 20 * 1024
    /// Shorter runs (CI's) are reported, not judged.
    static let minimumRun: Duration = .seconds(600)
    /// Instances watched for less than this after their warm-up are reported, not judged.
    static let minimumLifeMs = 300_000

    /// For each process, the growth of its longest-lived instance.
    static func growth(_ samples: [ResourceSample], run: Duration) -> [ResourceGrowth] {
        let byProcess = Dictionary(grouping: samples, by: \.process)
        return byProcess.keys.sorted().compactMap { name -> ResourceGrowth? in
            let instances = Dictionary(grouping: byProcess[name]!, by: \.instance).values.map { $0.sorted { $0.tMs < $1.tMs } }
            guard let series = instances.max(by: { span($0) < span($1) }), let start = series.first?.tMs else { return nil }
            let steady = series.filter { $0.tMs >= start + warmUpMs }
            let used = steady.count >= 2 ? steady : series
            let steadyMs = span(used)
            let per = max(1, min(used.count / 3, used.filter { $0.tMs < used[0].tMs + windowMs }.count))
            let first = window(used.prefix(per))
            let last = window(used.suffix(per))
            let judged = run >= minimumRun && steady.count >= 2 && steadyMs >= minimumLifeMs
            var exceeded: [String] = []
            if judged {
                if last.fds - first.fds > fds { exceeded.append("fds +\(last.fds - first.fds) (bound +\(fds))") }
                if last.threads - first.threads > threads { exceeded.append("threads +\(last.threads - first.threads) (bound +\(threads))") }
                let grown = last.rssKB - first.rssKB
                if grown > rssKB && Double(grown) > Double(first.rssKB) * rssRatio {
                    exceeded.append("RSS +\(grown / 1024) MiB (bound +50 % and +20 MiB)")
                }
            }
            return ResourceGrowth(
                process: name, instance: series[0].instance, livedMs: span(series), samples: series.count, first: first, last: last,
                judged: judged, exceeded: exceeded)
        }
    }

    private static func span(_ series: [ResourceSample]) -> Int { (series.last?.tMs ?? 0) - (series.first?.tMs ?? 0) }

    private static func window(_ samples: ArraySlice<ResourceSample>) -> ResourceGrowth.Window {
        func median(_ values: [Int]) -> Int { values.sorted()[values.count / 2] }
        return ResourceGrowth.Window(
            rssKB: median(samples.map(\.rssKB)), fds: median(samples.map(\.fds)), threads: median(samples.map(\.threads)))
    }
}
