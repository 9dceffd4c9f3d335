// A driver for instruction-counting profilers (valgrind's callgrind): the kernel, an echo
// service and a caller in one process, the caller making a given number of calls one at a time
// (as `busctl bench reqrep`'s "p50 one at a time", `--executor io-thread`), or with
// `--in-flight K` from K tasks at once (as its "K in flight"). Its entry point is
// synchronous: valgrind 3.19 dies while an async `main` parks its main thread in libdispatch,
// and this one waits on a semaphore instead. `scripts/instructions-per-request` runs it twice
// with different call counts and divides the difference of each thread's instructions by the
// difference of the calls, which leaves out the start and the end.
//
//   BusProfile reqrep --calls N [--size BYTES] [--in-flight K]
//
// Prints {"calls":N} on success. Exit status 0, 64 on a usage error, 1 when the run fails.
import Bus
import BusKernel
import BusSupport
import Dispatch
import Foundation

struct Usage: Error, CustomStringConvertible { let description: String }
struct Failure: Error, CustomStringConvertible { let description: String }

struct Options {
    var calls = 0
    var size = 64
    var inFlight = 1
}

func parse(_ arguments: [String]) throws -> Options {
    guard arguments.first == "reqrep" else { throw Usage(description: "the first argument must be reqrep") }
    var options = Options()
    var rest = arguments.dropFirst()
    while let flag = rest.popFirst() {
        guard ["--calls", "--size", "--in-flight"].contains(flag) else { throw Usage(description: "unknown option \(flag)") }
        guard let value = rest.popFirst(), let number = Int(value), number > 0 else {
            throw Usage(description: "\(flag) needs a positive number")
        }
        switch flag {
        case "--calls": options.calls = number
        case "--size": options.size = number
        default: options.inFlight = number
        }
    }
    guard options.calls > 0 else { throw Usage(description: "--calls is required") }
    guard options.calls % options.inFlight == 0 else { throw Usage(description: "--calls must be a multiple of --in-flight") }
    return options
}

func run(_ options: Options) async throws {
    let (calls, size, inFlight) = (options.calls, options.size, options.inFlight)
    guard let base = FreePorts.kernelBase() else { throw Failure(description: "no three free ports on 127.0.0.1") }
    let endpoints = try Endpoints(kernel: "tcp://127.0.0.1:\(base)")
    let kernel = Kernel(config: KernelConfig(endpoints: endpoints), logger: Logger(label: "kernel", level: .error))
    try await kernel.start()
    defer { kernel.stop() }
    func client(_ name: String) -> BusClient {
        var options = BusOptions(endpoints: endpoints, name: name)
        options.logger = Logger(label: name, level: .error)
        return BusClient(options: options)
    }
    let server = client("profilesvc")
    let service = BusService(name: "profilesvc", execution: .ioThread)
    service.method("echo", raw: { $0.payload })
    let handle = try server.serve(service)
    let caller = client("profilecaller")
    let payload = [UInt8](repeating: 0x61, count: size)
    try await Task(executorPreference: caller.taskExecutor) {
        // Until the worker is registered: the first call that is answered.
        let deadline = ContinuousClock.now + .seconds(60)
        while (try? await caller.call("profilesvc", "echo", payload: payload, timeout: .seconds(5)))?.status != 200 {
            guard ContinuousClock.now < deadline else { throw Failure(description: "the echo service did not register within 60 s") }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<inFlight {
                group.addTask(executorPreference: caller.taskExecutor) {
                    for _ in 0..<calls / inFlight {
                        let reply = try await caller.call("profilesvc", "echo", payload: payload, timeout: .seconds(30))
                        guard reply.status == 200 else { throw Failure(description: "a call failed with status \(reply.status)") }
                    }
                }
            }
            try await group.waitForAll()
        }
    }.value
    await handle.drain(timeout: .milliseconds(200))
    await server.close()
    await caller.close()
}

let options: Options
do {
    options = try parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("BusProfile: \(error)\nusage: BusProfile reqrep --calls N [--size BYTES] [--in-flight K]\n".utf8))
    exit(64)
}
let outcome = Locked<Result<Void, any Error>?>(nil)
let done = DispatchSemaphore(value: 0)
// Detached: top-level code runs on the main actor, whose thread waits on the semaphore below.
Task.detached {
    do {
        try await run(options)
        outcome.withLock { $0 = .success(()) }
    } catch {
        outcome.withLock { $0 = .failure(error) }
    }
    done.signal()
}
done.wait()
switch outcome.withLock({ $0 }) {
case .success?:
    print("{\"calls\":\(options.calls)}")
case .failure(let error)?:
    FileHandle.standardError.write(Data("BusProfile: \(error)\n".utf8))
    exit(1)
case nil:
    exit(1)
}
