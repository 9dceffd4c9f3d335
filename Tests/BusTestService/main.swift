// A service used by the integration tests: a real process on the bus with methods that echo,
// sleep, fail on demand and publish state (restored at start with --restore-ms). Not shipped; built with the tests.
import Bus
import Foundation

struct SleepInput: Codable, Sendable { var ms: Int }
struct FailInput: Codable, Sendable { var status: Int; var code: String? }
struct SetInput: Codable, Sendable { var value: Int }
struct PublishInput: Codable, Sendable { var topic: String; var count: Int; var retain: Bool? }
struct Counter: Codable, Sendable { var value: Int }
struct Identity: Codable, Sendable { var instance: String; var pid: Int32; var name: String }

/// The counter `set` publishes as `<name>.state` and `get` returns.
final class CounterState: Sendable {
    private let counter = Locked(Counter(value: 0))
    var value: Counter { counter.withLock { $0 } }
    func set(_ value: Counter) { counter.withLock { $0 = value } }
}

let arguments = Array(CommandLine.arguments.dropFirst())
var name = "testsvc"
if let index = arguments.firstIndex(of: "--name"), index + 1 < arguments.count { name = arguments[index + 1] }
let serviceName = name

await ServiceMain.run(
    name: serviceName, overview: "Test fixture service: echo, sleep, fail, whoami, set, get, publish.",
    options: [
        OptionSpec("name", value: "NAME", help: "Service name to register.", default: "testsvc"),
        OptionSpec(
            "restore-ms", value: "MS", help: "Restore <name>.state (persist, then the kernel) waiting up to MS before serving; 0: start at 0.",
            default: "0"),
    ]
) { context in
    let bus = context.bus
    let counter = CounterState()
    if let ms = try context.arguments.int("restore-ms"), ms > 0,
        let restored = try await context.restore("\(serviceName).state", as: Counter.self, deadline: .milliseconds(ms))
    {
        counter.set(restored.value)
    }
    let concurrency = (try? context.arguments.int("concurrency")) ?? nil
    let service = BusService(name: serviceName, concurrency: concurrency ?? 1)
    service.method("echo", raw: { $0.payload })
    service.method("sleep") { (input: SleepInput) in
        try await Task.sleep(for: .milliseconds(input.ms))
        return Identity(instance: bus.instance, pid: getpid(), name: serviceName)
    }
    service.method("fail") { (input: FailInput) -> Counter in
        throw ServiceError(input.status, input.code ?? "requested", "failure requested by the caller")
    }
    service.method("whoami") { (_: [String: String]) in
        Identity(instance: bus.instance, pid: getpid(), name: serviceName)
    }
    service.method("set") { (input: SetInput) in
        try await bus.publish("\(serviceName).state", Counter(value: input.value), retain: true)
        counter.set(Counter(value: input.value))
        return Counter(value: input.value)
    }
    service.method("get") { (_: [String: String]) in counter.value }
    service.method("publish") { (input: PublishInput) in
        for i in 0..<input.count {
            try await bus.publish(input.topic, Counter(value: i), retain: input.retain ?? false)
        }
        return Counter(value: input.count)
    }
    return [service]
}
