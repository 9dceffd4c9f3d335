import Foundation

/// How a child process ended, decoded from a `waitpid` status.
enum ProcessExit: Equatable, Sendable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal ended it.
    case signalled(Int32)
    /// `waitpid` failed (someone else reaped it); how it ended is unknown.
    case unknown

    init(waitStatus: Int32) {
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (they are macros).
        let low = waitStatus & 0x7f
        self = low == 0 ? .exited((waitStatus >> 8) & 0xff) : .signalled(low)
    }

    /// "exited with status 1", "was killed by signal 9 (SIGKILL)".
    var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signalled(let number): return "was killed by signal \(number) (\(Self.signalName(number)))"
        case .unknown: return "ended (status unknown)"
        }
    }

    /// The short form for JSON and status lines: "status 0", "signal 9".
    var summary: String {
        switch self {
        case .exited(let code): return "status \(code)"
        case .signalled(let number): return "signal \(number)"
        case .unknown: return "unknown"
        }
    }

    static func signalName(_ number: Int32) -> String {
        switch number {
        case SIGHUP: return "SIGHUP"
        case SIGINT: return "SIGINT"
        case SIGQUIT: return "SIGQUIT"
        case SIGILL: return "SIGILL"
        case SIGTRAP: return "SIGTRAP"
        case SIGABRT: return "SIGABRT"
        case SIGBUS: return "SIGBUS"
        case SIGFPE: return "SIGFPE"
        case SIGKILL: return "SIGKILL"
        case SIGSEGV: return "SIGSEGV"
        case SIGPIPE: return "SIGPIPE"
        case SIGTERM: return "SIGTERM"
        case SIGUSR1: return "SIGUSR1"
        case SIGUSR2: return "SIGUSR2"
        default: return "SIG\(number)"
        }
    }
}
