/// The request and reply payloads of the `supervisor` service (JSON, snake_case keys).
enum SupervisorAPI {
    /// The service name the supervisor of `busctl up` registers.
    static let service = "supervisor"

    struct Empty: Codable, Sendable {}

    /// `restart {"service"}`.
    struct RestartRequest: Codable, Sendable {
        var service: String
    }

    /// `replace {"service","binary","timeout_ms"?}`.
    struct ReplaceRequest: Codable, Sendable {
        var service: String
        var binary: String
        /// How long the new process has to register (default: up's --register-timeout).
        var timeoutMs: Int?

        enum CodingKeys: String, CodingKey {
            case service, binary
            case timeoutMs = "timeout_ms"
        }
    }

    /// What `restart` and `replace` answer.
    struct ChangeReply: Codable, Sendable {
        var service: String
        /// The process that was stopped (nil when none was running).
        var oldPid: Int?
        /// How it ended: "status 0", "signal 9".
        var oldExit: String?
        /// True when the old process was running and was stopped (SIGTERM: it drained); false
        /// when it had already exited.
        var oldStopped: Bool
        var pid: Int
        var instance: String
        var binary: String

        enum CodingKeys: String, CodingKey {
            case service, pid, instance, binary
            case oldPid = "old_pid"
            case oldExit = "old_exit"
            case oldStopped = "old_stopped"
        }
    }

    /// One supervised process in `status`.
    struct ProcessStatus: Codable, Sendable, Equatable {
        var name: String
        /// Nil while no process runs (waiting to restart, stopped).
        var pid: Int?
        /// starting, up, unregistered (running, not registered), restarting (back-off),
        /// replacing, stopping, stopped, failed (cannot be started).
        var state: String
        /// Restarts so far, after crashes and on request.
        var restarts: Int
        /// When the process started, or when it entered `state` if none runs (ISO 8601, UTC).
        var since: String
        var binary: String
        /// The bus instance id of the running process, when registered.
        var instance: String?
        /// The last exit, e.g. "signal 9".
        var lastExit: String?

        enum CodingKeys: String, CodingKey {
            case name, pid, state, restarts, since, binary, instance
            case lastExit = "last_exit"
        }
    }

    /// What `status` answers.
    struct StatusReply: Codable, Sendable {
        var processes: [ProcessStatus]
    }
}
