import Foundation

/// Stops a supervised process whose supervisor vanished without stopping it.
///
/// `busctl up` starts each child with `BUS_EXIT_WITH_PARENT=<its own pid>`. A child that sees
/// its parent change (the supervisor was SIGKILLed, so the child was re-parented) sends itself
/// SIGTERM: the same graceful stop as a normal shutdown (drain, DISCONNECT, exit 0), instead
/// of an orphan that keeps serving on a bus nobody supervises.
public enum ParentWatch {
    /// Starts the watch when the environment asks for it (call after installing the SIGTERM
    /// handling). Checks five times a second on its own thread.
    public static func startIfAsked(logger: Logger) {
        guard let text = ProcessInfo.processInfo.environment["BUS_EXIT_WITH_PARENT"], let parent = pid_t(text), parent > 1
        else { return }
        Thread.startNamed("bus.parentwatch") {
            while getppid() == parent { usleep(200_000) }
            logger.warning("the supervising process (pid \(parent)) is gone; stopping")
            kill(getpid(), SIGTERM)
        }
    }
}
