import Bus
import Foundation

/// Prints the lines of every supervised process and of the supervisor itself on standard
/// output, one whole line per `write`, each with its source as a prefix: `[auth] ...`. On a
/// terminal the prefixes are padded to one width and coloured (unless `NO_COLOR` is set).
final class LogPrinter: Sendable {
    static let supervisorName = "supervisor"

    let isTerminal: Bool
    let colour: Bool
    private let state: Locked<State>

    private struct State {
        var width: Int
        var colours: [String: String] = [:]
    }

    private static let palette = ["36", "32", "33", "35", "34", "31", "96", "92", "93", "95", "94"]

    /// - Parameter names: every name that will print, for the padding width.
    init(
        names: [String], isTerminal: Bool = isatty(STDOUT_FILENO) == 1,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.isTerminal = isTerminal
        self.colour = isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        var state = State(width: (names + [Self.supervisorName]).map(\.count).max() ?? 0)
        for (index, name) in names.enumerated() {
            state.colours[name] = Self.palette[index % Self.palette.count]
        }
        self.state = Locked(state)
    }

    /// One line a child process wrote.
    func child(_ name: String, _ line: String) {
        write(prefix(name) + line + "\n")
    }

    /// One line from the supervisor itself: `[supervisor] text`.
    func supervisor(_ text: String) {
        write(prefix(Self.supervisorName) + text + "\n")
    }

    /// `error: text` on standard error.
    func error(_ text: String) {
        Self.write("error: \(text)\n", to: STDERR_FILENO)
    }

    private func prefix(_ name: String) -> String {
        guard isTerminal else { return "[\(name)] " }
        let (width, code) = state.withLock { ($0.width, $0.colours[name]) }
        let padding = String(repeating: " ", count: max(0, width - name.count))
        guard colour else { return "[\(name)]\(padding) " }
        let sgr = name == Self.supervisorName ? "1" : (code ?? "0")
        return "\u{1B}[\(sgr)m[\(name)]\u{1B}[0m\(padding) "
    }

    private func write(_ text: String) {
        Self.write(text, to: STDOUT_FILENO)
    }

    private static let lock = Locked(0)

    /// Writes all of `text`; a closed pipe (EPIPE, SIGPIPE is ignored) drops it.
    static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        lock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n > 0 {
                    offset += n
                } else if n < 0, errno == EINTR || errno == EAGAIN {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
