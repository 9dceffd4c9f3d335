import Foundation

/// Stops a supervised process whose supervisor vanished without stopping it.
///
/// `busctl up` starts each child with `BUS_EXIT_WITH_PARENT=<its own pid>`. A child that sees
/// its parent change (the supervisor was SIGKILLed, so the child was re-parented) sends itself
/// SIGTERM: the same graceful stop as a normal shutdown (drain, DISCONNECT, exit 0), instead
/// of an orphan that keeps serving on a bus nobody supervises. The test harness does the same
/// for every process it starts, so a test process that dies leaves nothing running.
///
/// A value naming a live process that is not the parent at start was inherited from further
/// up (a script started by the test, which started this one): it is ignored, else the watch
/// would stop the process at once. A value naming a process that is gone is not: the parent
/// may have died before this process got here (seen under load), and it stops at once.
package enum ParentWatch {
    /// Starts the watch when the environment asks for it; call once per process, early. A
    /// process that stops gracefully on SIGTERM installs its handling right after; a parent
    /// that dies before that ends it by the default action, which at start-up loses nothing.
    /// Checks five times a second on its own thread.
    package static func startIfAsked(logger: Logger) {
        guard let text = ProcessInfo.processInfo.environment["BUS_EXIT_WITH_PARENT"], let parent = pid_t(text), parent > 1
        else { return }
        guard getppid() == parent || hasEnded(parent) else {
            logger.debug("BUS_EXIT_WITH_PARENT=\(parent) names a process that is not this one's parent (inherited); not watching")
            return
        }
        Thread.startNamed("bus.parentwatch") {
            while getppid() == parent { usleep(200_000) }
            logger.warning("the supervising process (pid \(parent)) is gone; stopping")
            kill(getpid(), SIGTERM)
        }
    }

    /// No such process, or one that ended and is not reaped yet (a zombie).
    package static func hasEnded(_ pid: pid_t) -> Bool {
        if kill(pid, 0) != 0 { return errno == ESRCH }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[close...].dropFirst(2).first == "Z"
    }
}
