import Foundation

/// busctl's output: unbuffered writes (a stream piped into another program sees every line at
/// once), JSON rendering, and whether a stream is a terminal.
enum Output {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func line(_ text: String) {
        write(text + "\n")
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Columns of the terminal on standard output, or nil when it is not one.
    static var terminalWidth: Int? {
        guard stdoutIsTerminal else { return nil }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// A JSON value as text: sorted keys, no escaped slashes; compact, or indented by two
    /// spaces as `jq` does when `pretty`.
    static func json(_ value: Any, pretty: Bool = false) -> String {
        pretty ? indented(value, depth: 0) : compact(value)
    }

    private static func compact(_ value: Any) -> String {
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: options) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    private static func indented(_ value: Any, depth: Int) -> String {
        let inner = String(repeating: "  ", count: depth + 1)
        let outer = String(repeating: "  ", count: depth)
        if let object = value as? [String: Any] {
            guard !object.isEmpty else { return "{}" }
            let members = object.keys.sorted().map { inner + compact($0) + ": " + indented(object[$0]!, depth: depth + 1) }
            return "{\n" + members.joined(separator: ",\n") + "\n" + outer + "}"
        }
        if let array = value as? [Any] {
            guard !array.isEmpty else { return "[]" }
            return "[\n" + array.map { inner + indented($0, depth: depth + 1) }.joined(separator: ",\n") + "\n" + outer + "]"
        }
        return compact(value)
    }

    /// Writes one JSON object as one line.
    static func jsonLine(_ value: Any) {
        line(json(value))
    }
}
