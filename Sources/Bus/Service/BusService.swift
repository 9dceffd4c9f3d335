import Foundation

/// A named service and its method handlers.
///
/// ```swift
/// let service = BusService(name: "greeter")
/// service.method("hello") { (input: Hello) in Greeting(text: "hello \(input.name)") }
/// ```
/// The runner calls handlers one request at a time, in arrival order (``concurrency`` 1), so
/// handlers can share a plain actor's state without reordering surprises; raise
/// ``concurrency`` for services whose requests are independent.
public final class BusService: Sendable {
    public typealias Handler = @Sendable (ServiceRequest) async throws -> [UInt8]

    public let name: String
    /// How many requests are handled at once (one MDP worker connection each).
    public let concurrency: Int
    /// Requests the kernel may send each worker connection before its first reply (the READY
    /// metadata's `credit`). They are still handled one at a time, in order; the queue only
    /// hides the round trip between a reply and the next request.
    public let pipeline: Int
    /// Where handlers run: on the cooperative pool (the default) or on the client's I/O thread.
    public let execution: Execution
    private let handlers = Locked<[String: Handler]>([:])

    /// Where a service's handlers run.
    public enum Execution: Sendable, Equatable {
        /// Swift's cooperative pool: any handler, including slow ones. A request crosses from
        /// the I/O thread to the pool and its reply back.
        case pool
        /// The client's I/O thread (see ``BusClient/taskExecutor``): no thread hop per request,
        /// for handlers that answer in microseconds and never block. A slow handler here
        /// delays every socket of its client, heartbeats included, so the kernel may consider
        /// the worker dead after its heartbeat expiry.
        case ioThread
    }

    /// - Parameters:
    ///   - name: the service name workers register (`[a-z0-9_-]`, no dots).
    ///   - concurrency: requests handled at once; 1 keeps them in order.
    ///   - pipeline: requests queued per worker connection ahead of the one being handled.
    ///   - execution: where handlers run (``Execution/pool`` unless they are trivially fast).
    public init(name: String, concurrency: Int = 1, pipeline: Int = 32, execution: Execution = .pool) {
        self.name = name
        self.concurrency = max(1, concurrency)
        self.pipeline = min(1000, max(1, pipeline))
        self.execution = execution
    }

    /// Registers a raw handler: the payload in, the payload out (status 200).
    public func method(_ name: String, raw handler: @escaping Handler) {
        handlers.withLock { $0[name] = handler }
    }

    /// Registers a typed handler: JSON in, JSON out.
    public func method<Input: Decodable & Sendable, Output: Encodable & Sendable>(
        _ name: String, _ handler: @escaping @Sendable (Input) async throws -> Output
    ) {
        method(
            name,
            raw: { request in
                let input = try request.decode(Input.self)
                let output = try await handler(input)
                return Array(try JSONEncoder.bus.encode(output))
            })
    }

    /// Registers a typed handler that also sees the request (meta, method).
    public func method<Input: Decodable & Sendable, Output: Encodable & Sendable>(
        _ name: String, withRequest handler: @escaping @Sendable (Input, ServiceRequest) async throws -> Output
    ) {
        method(
            name,
            raw: { request in
                let input = try request.decode(Input.self)
                let output = try await handler(input, request)
                return Array(try JSONEncoder.bus.encode(output))
            })
    }

    /// The registered method names.
    public var methods: [String] { handlers.withLock { $0.keys.sorted() } }

    /// Answers one request body (the frames of `message` from `start` on): decodes it, runs
    /// the handler, maps errors to statuses.
    func answer(_ message: Frames, from start: Int, received: MonotonicTime, instance: String, logger: Logger) async -> ReplyBody {
        let request: RequestBody
        do {
            request = try RequestBody.decode(message, from: start)
        } catch {
            return .error(400, code: "malformed", message: error.description, id: nil, from: instance)
        }
        let id = request.meta.id
        guard let handler = handlers.withLock({ $0[request.method] }) else {
            return .error(
                404, code: "no_such_method",
                message: "service '\(name)' has no method '\(request.method)' (it has: \(methods.joined(separator: ", ")))", id: id, from: instance)
        }
        let serviceRequest = ServiceRequest(method: request.method, meta: request.meta, payload: request.payload, received: received)
        let elapsed: () -> Int = { Int(MonotonicTime.now.microseconds(since: received)) }
        do {
            let payload = try await handler(serviceRequest)
            return ReplyBody(status: 200, meta: ReplyMeta(id: id, from: instance, elapsedMicros: elapsed()), payload: payload)
        } catch let error as ServiceError {
            return .error(error.status, code: error.code, message: error.message, id: id, from: instance)
        } catch let error as BusError {
            if case .reply(let status, let code, let message) = error {
                return .error(status, code: code, message: message, id: id, from: instance)
            }
            return .error(503, code: "upstream", message: error.description, id: id, from: instance)
        } catch {
            logger.error("\(name).\(request.method) failed", metadata: ["error.type": "\(type(of: error))"])
            return .error(500, code: "internal", message: "\(name).\(request.method) failed: \(error)", id: id, from: instance)
        }
    }
}
