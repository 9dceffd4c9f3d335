import Bus
import Foundation

/// `busctl services` (`ls`): every registered service and its instances.
struct ServicesCommand: BusctlCommand {
    static let name = "services"
    static let aliases = ["ls"]
    static let overview = "List registered services: instances, version, host/pid, uptime, heartbeat, requests."
    static let usage = "[--json] [options]"
    static let options = BusSettings.options + [BusSettings.json]
    static let discussion: String? = """
        One row per instance. HEARTBEAT is how long ago the kernel last heard from it; HANDLED,
        IN-FLIGHT and FAILED count its requests (FAILED: 5xx replies and lost workers). A service
        with requests queued but no instance is listed with '-'.
        --json prints the kernel's bus.services answer: {"services":[...]} on one line.
        """

    var bus: BusSettings
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        bus = try BusSettings(arguments)
        json = arguments.flag("json")
    }

    func run() async throws -> Int32 {
        let services = try await bus.withBus { client in try await client.services(timeout: bus.connectTimeout) }
        if json {
            let data = try JSONEncoder.bus.encode(["services": services])
            Output.line(String(decoding: data, as: UTF8.self))
            return ExitCode.ok
        }
        guard !services.isEmpty else {
            Output.line("no services registered")
            return ExitCode.ok
        }
        Output.write(Self.table(services))
        return ExitCode.ok
    }

    static func table(_ services: [ServiceSnapshot]) -> String {
        var table = Table(
            "SERVICE", "INSTANCE", "VERSION", "HOST/PID", ">UPTIME", ">HEARTBEAT", ">WORKERS", ">HANDLED", ">IN-FLIGHT", ">FAILED", "STATE")
        for service in services {
            if service.instances.isEmpty {
                table.add([
                    service.service, "-", "-", "-", "-", "-", "0", "-", "-", "-", service.queued > 0 ? "\(service.queued) queued" : "no instance",
                ])
            }
            for instance in service.instances {
                let where_ = [instance.host ?? "?", instance.pid.map(String.init) ?? "?"].joined(separator: "/")
                table.add([
                    service.service, instance.instance, instance.version ?? "-", where_,
                    Format.age(ms: instance.uptimeMs), Format.age(ms: instance.heartbeatAgeMs), String(instance.workers),
                    String(instance.handled), String(instance.inFlight), String(instance.failed),
                    instance.draining ? "draining" : (instance.late == true ? "late" : "ready"),
                ])
            }
        }
        return table.render()
    }
}
