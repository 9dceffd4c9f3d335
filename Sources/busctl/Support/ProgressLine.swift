import Foundation

/// A status line on standard error, redrawn in place while a long command runs; only when
/// standard error is a terminal (otherwise just the final summary is written).
struct ProgressLine {
    let enabled = Output.stderrIsTerminal
    private var last = ContinuousClock.now - .seconds(1)
    private var shown = false

    /// Redraws the line at most every 200 ms (always when `force`).
    mutating func update(_ text: @autoclosure () -> String, force: Bool = false) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard force || now - last >= .milliseconds(200) else { return }
        last = now
        shown = true
        Output.error("\r\u{1B}[K" + text())
    }

    /// Replaces the progress line with a final summary line.
    mutating func finish(_ summary: String) {
        if shown { Output.error("\r\u{1B}[K") }
        shown = false
        Output.error(summary + "\n")
    }
}
