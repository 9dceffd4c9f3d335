import BusSupport
import BusWire
import BusZMQ
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
    /// A handler that never suspends. With ``Execution/ioThread`` it runs as its request is
    /// read, with no task, queue or continuation per request.
    public typealias SyncHandler = @Sendable (ServiceRequest) throws -> [UInt8]

    public let name: String
    /// How many requests are handled at once (one MDP worker connection each).
    public let concurrency: Int
    /// Requests the kernel may send each worker connection before its first reply (the READY
    /// metadata's `credit`). They are still handled one at a time, in order; the queue only
    /// hides the round trip between a reply and the next request.
    public let pipeline: Int
    /// Where handlers run: on the cooperative pool (the default) or on the client's I/O thread.
    public let execution: Execution
    private let handlers = Locked<[String: Entry]>([:])

    /// A registered handler of either kind.
    enum Entry: Sendable {
        case async(Handler)
        case sync(SyncHandler)
    }

    /// Where a service's handlers run.
    public enum Execution: Sendable, Equatable {
        /// Swift's cooperative pool: any handler, including slow ones. A request crosses from
        /// the I/O thread to the pool and its reply back.
        case pool
        /// The client's I/O thread (see ``BusClient/taskExecutor``): no thread hop per request,
        /// for handlers that answer in microseconds and never block. A slow handler here
        /// delays every socket of its client, heartbeats included, so the kernel may consider
        /// the worker dead after its heartbeat expiry. A ``SyncHandler`` runs as its request is
        /// read (no task per request) unless an earlier request of its worker connection is
        /// still unanswered, so arrival order holds.
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
        handlers.withLock { $0[name] = .async(handler) }
    }

    /// Registers a raw handler that never suspends (a closure without `await` picks this one).
    public func method(_ name: String, raw handler: @escaping SyncHandler) {
        handlers.withLock { $0[name] = .sync(handler) }
    }

    /// Registers a typed handler: JSON in, JSON out.
    public func method<Input: Decodable & Sendable, Output: Encodable & Sendable>(
        _ name: String, _ handler: @escaping @Sendable (Input) async throws -> Output
    ) {
        method(name, withRequest: { input, _ in try await handler(input) })
    }

    /// Registers a typed handler that never suspends: JSON in, JSON out.
    public func method<Input: Decodable & Sendable, Output: Encodable & Sendable>(
        _ name: String, _ handler: @escaping @Sendable (Input) throws -> Output
    ) {
        method(name, withRequest: { input, _ in try handler(input) })
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

    /// Registers a typed handler that also sees the request and never suspends.
    public func method<Input: Decodable & Sendable, Output: Encodable & Sendable>(
        _ name: String, withRequest handler: @escaping @Sendable (Input, ServiceRequest) throws -> Output
    ) {
        method(
            name,
            raw: { request in
                let input = try request.decode(Input.self)
                return Array(try JSONEncoder.bus.encode(try handler(input, request)))
            })
    }

    /// The registered method names.
    public var methods: [String] { handlers.withLock { $0.keys.sorted() } }

    /// A request decoded and its handler found, or the reply that ends it before any handler
    /// runs (a malformed body, an unknown method).
    enum Prepared: Sendable {
        case run(Entry, ServiceRequest)
        case done(ReplyBody)
    }

    /// Decodes one request body (the frames of `message` from `start` on) and finds its handler.
    func prepare(_ message: Frames, from start: Int, received: MonotonicTime, instance: String) -> Prepared {
        let request: RequestBody
        do {
            request = try RequestBody.decode(message, from: start)
        } catch {
            return .done(.error(400, code: "malformed", message: error.description, id: nil, from: instance))
        }
        return prepare(request, received: received, instance: instance)
    }

    /// Finds the handler of a decoded request.
    func prepare(_ request: RequestBody, received: MonotonicTime, instance: String) -> Prepared {
        guard let entry = handlers.withLock({ $0[request.method] }) else {
            return .done(
                .error(
                    404, code: "no_such_method",
                    message: "service '\(name)' has no method '\(request.method)' (it has: \(methods.joined(separator: ", ")))",
                    id: request.meta.id, from: instance))
        }
        return .run(entry, ServiceRequest(method: request.method, meta: request.meta, payload: request.payload, received: received))
    }

    /// Runs a prepared request's handler, whichever kind it is, and maps what it threw to a status.
    func run(_ prepared: Prepared, instance: String, logger: Logger) async -> ReplyBody {
        switch prepared {
        case .done(let reply):
            return reply
        case .run(.sync(let handler), let request):
            return reply(to: request, instance: instance, logger: logger) { try handler(request) }
        case .run(.async(let handler), let request):
            do {
                let payload = try await handler(request)
                return reply(to: request, instance: instance, logger: logger) { payload }
            } catch {
                return reply(to: request, instance: instance, logger: logger) { throw error }
            }
        }
    }

    /// The reply at once, without suspending: nil when the request needs an async handler.
    func runNow(_ prepared: Prepared, instance: String, logger: Logger) -> ReplyBody? {
        switch prepared {
        case .done(let reply): return reply
        case .run(.sync(let handler), let request): return reply(to: request, instance: instance, logger: logger) { try handler(request) }
        case .run(.async, _): return nil
        }
    }

    /// The reply for what `body` returns or throws.
    private func reply(to request: ServiceRequest, instance: String, logger: Logger, _ body: () throws -> [UInt8]) -> ReplyBody {
        let id = request.meta.id
        do {
            let payload = try body()
            let elapsed = Int(MonotonicTime.now.microseconds(since: request.received))
            return ReplyBody(status: 200, meta: ReplyMeta(id: id, from: instance, elapsedMicros: elapsed), payload: payload)
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
