import Bus

/// The `supervisor` service that `busctl up` serves: `status`, `restart {"service"}`,
/// `replace {"service","binary","timeout_ms"?}`. Handlers run up to four at once, so `status`
/// answers while a replace waits for its new process.
enum SupervisorService {
    static func make(_ supervisor: Supervisor) -> BusService {
        let service = BusService(name: SupervisorAPI.service, concurrency: 4)
        service.method("status") { (_: SupervisorAPI.Empty) in
            await supervisor.status()
        }
        service.method("restart") { (request: SupervisorAPI.RestartRequest) in
            try await supervisor.restart(request.service)
        }
        service.method("replace") { (request: SupervisorAPI.ReplaceRequest) in
            guard request.timeoutMs.map({ $0 > 0 }) ?? true else {
                throw ServiceError.badRequest("timeout_ms must be above 0")
            }
            return try await supervisor.replace(
                request.service, binary: request.binary, timeout: request.timeoutMs.map { .milliseconds($0) })
        }
        return service
    }
}
