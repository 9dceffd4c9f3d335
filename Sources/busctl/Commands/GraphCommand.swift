import Bus
import Foundation

/// `busctl graph`: who publishes, subscribes and calls what, as Graphviz DOT or SVG.
struct GraphCommand: BusctlCommand {
    static let name = "graph"
    static let overview = "Draw services, topics and who publishes, subscribes and calls what."
    static let usage = "[--format dot|svg|json] [--output FILE] [--json] [options]"
    static let options =
        BusSettings.options + [
            OptionSpec("format", value: "FORMAT", help: "dot (Graphviz source), svg (rendered by Graphviz's dot) or json.", default: "dot"),
            OptionSpec("output", short: "o", value: "FILE", help: "Write to FILE instead of standard output."),
            OptionSpec("json", help: "Same as --format json."),
        ]
    static let discussion: String? = """
        Built from what the kernel saw (bus.stats): registered services (filled boxes), other
        publishers and callers such as busctl (dashed boxes), topics (ellipses; a double border
        is a retained topic), and subscriptions, one dashed box per subscribed prefix (the
        kernel does not know who subscribed, only to what). Edges: publisher -> topic labelled
        with the message count, topic -> subscription (dashed), caller -> service labelled with
        the number of calls (blue).
        svg needs Graphviz ('dot' on PATH); without it busctl says so and exits 1.
        Example: busctl graph --format svg -o bus.svg
        """

    enum Format: String { case dot, svg, json }

    var bus: BusSettings
    var format: Format
    var output: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        let name = arguments.flag("json") ? "json" : (arguments.value("format") ?? "dot")
        guard let format = Format(rawValue: name) else { throw UsageError("--format must be dot, svg or json, got '\(name)'") }
        self.format = format
        output = arguments.value("output")
        if output?.isEmpty == true { throw UsageError("--output needs a file name") }
    }

    func run() async throws -> Int32 {
        var dotPath: String?
        if format == .svg {
            guard let found = Self.findExecutable("dot") else {
                throw CommandFailure(
                    "--format svg needs Graphviz, and 'dot' is not on PATH: install it (apt install graphviz, brew install graphviz) or use --format dot"
                )
            }
            dotPath = found
        }
        let stats = try await bus.withBus { client in try await KernelStats.fetch(client, timeout: bus.connectTimeout) }
        let graph = BusGraph(stats)
        switch format {
        case .dot: try write(Data(graph.dot().utf8))
        case .json: try write(Data((Output.json(graph.jsonObject()) + "\n").utf8))
        case .svg: try write(try Self.render(graph.dot(), with: dotPath!))
        }
        return ExitCode.ok
    }

    private func write(_ data: Data) throws {
        guard let output else {
            FileHandle.standardOutput.write(data)
            return
        }
        do {
            try data.write(to: URL(fileURLWithPath: output))
        } catch {
            throw CommandFailure("cannot write \(output): \(error.localizedDescription)")
        }
    }

    /// Runs `dot -Tsvg` on the source and returns the SVG.
    static func render(_ source: String, with dot: String) throws -> Data {
        let directory = FileManager.default.temporaryDirectory
        let input = directory.appendingPathComponent("busctl-graph-\(getpid()).dot")
        let rendered = directory.appendingPathComponent("busctl-graph-\(getpid()).svg")
        defer {
            try? FileManager.default.removeItem(at: input)
            try? FileManager.default.removeItem(at: rendered)
        }
        try Data(source.utf8).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: dot)
        process.arguments = ["-Tsvg", "-o", rendered.path, input.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let svg = try? Data(contentsOf: rendered) else {
            let detail = String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw CommandFailure("Graphviz (\(dot)) failed with status \(process.terminationStatus)\(detail.isEmpty ? "" : ": \(detail)")")
        }
        return svg
    }

    /// The first executable called `name` in `PATH`.
    static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
