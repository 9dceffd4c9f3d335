import BusSupport
import BusWire
import BusZMQ
import Foundation

extension BusClient {
    /// Calls `service.method` and returns the reply whatever its status.
    ///
    /// - Parameters:
    ///   - payload: the request payload (JSON by convention).
    ///   - timeout: the deadline (default ``BusOptions/requestTimeout``); also sent to the
    ///     kernel, which holds a request for a service with no worker at most this long.
    /// - Throws: ``BusError/timeout(service:method:seconds:)`` when the reply is late,
    ///   ``BusError/unreachable(endpoint:reason:)`` when the request could not even be sent,
    ///   ``BusError/closed``, ``BusError/cancelled``, ``BusError/invalidPayload(_:)`` for a
    ///   payload over ``BusOptions/maxPayloadBytes``.
    ///   A call from a task that is already cancelled throws ``BusError/cancelled`` without
    ///   sending anything; one cancelled while it waits throws it at once, and its reply, if
    ///   one still comes, is dropped.
    ///
    /// Runs on the caller's executor (`nonisolated(nonsending)`), so a call does not first hop
    /// to the generic executor (a task switch and a look-up of the task's executor preference
    /// per call). Before it suspends it only builds the request and queues it for the I/O
    /// thread (a lock, and at most one `write` to wake that thread); after the reply it decodes
    /// nothing, so an actor or the main actor that calls it is held no longer than that.
    nonisolated(nonsending) public func call(
        _ service: String, _ method: String, payload: [UInt8] = [], timeout: Duration? = nil,
        meta: RequestMeta = RequestMeta()
    ) async throws(BusError) -> ReplyBody {
        try checkSize(payload, what: "request to \(service).\(method)")
        // A cancellation handler installed in a cancelled task runs before the request is
        // queued, so its cancel would find nothing to cancel; a task already cancelled sends
        // nothing.
        if Task.isCancelled { throw .cancelled }
        // One conversion of the Duration (each divides a 128-bit count of attoseconds).
        let timeoutNanos = (timeout ?? options.requestTimeout).nanosecondsClamped
        let timeoutMs = timeoutNanos / 1_000_000
        var meta = meta
        // Replies are matched by a number per request, which the requester writes as the id
        // (binary, or as text in JSON meta); the caller's own id, if it gave one, goes on the
        // wire instead (and the meta as JSON).
        let id = UInt64(nextID())
        let customID = meta.id
        meta.timeoutMs = meta.timeoutMs ?? Int(timeoutMs)
        meta.caller = meta.caller ?? options.name
        // Encoded on the I/O thread, straight into the message it sends.
        let request = RequestBody(method: method, meta: meta, payload: payload)
        let deadline = MonotonicTime.now.advanced(by: timeoutNanos)
        let io = self.io
        @Sendable func cancel() { io.submit { loop in (try? loop.requesterHandler())?.cancel(id: id) } }
        // Resumed exactly once: the I/O thread runs every operation it accepted (it stops only
        // after the queued ones), and the requester calls each request's completion once, when
        // it takes the request out (reply, timeout, cancel, failure or close). Unchecked: the
        // checked continuation's box and atomic check were about a tenth of the caller's I/O
        // thread at 64 requests in flight (docs/PERFORMANCE.md).
        let outcome: RequestOutcome = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<RequestOutcome, Never>) in
                let accepted = io.submit { loop in
                    do throws(ZMQError) {
                        try loop.requesterHandler().send(id: id, customID: customID, service: service, request: request, deadline: deadline) {
                            continuation.resume(returning: $0)
                        }
                    } catch {
                        continuation.resume(returning: .failed(.zmq(error)))
                    }
                }
                if !accepted {
                    continuation.resume(returning: .failed(.closed))
                } else if Task.isCancelled {
                    // Cancelled since the check above: the handler's cancel may have been queued
                    // before the send, and found nothing. This one comes after it (a second
                    // cancel finds nothing and does nothing).
                    cancel()
                }
            }
        } onCancel: {
            cancel()
        }
        let seconds = Double(timeoutMs) / 1000
        switch outcome {
        case .reply(let reply): return reply
        case .timeout: throw .timeout(service: service, method: method, seconds: seconds)
        case .unreachable(let problem):
            throw .unreachable(endpoint: options.endpoints.requests, reason: problem ?? "no connection within \(seconds) s")
        case .failed(let error): throw error
        }
    }

    /// Calls `service.method` with a JSON body and decodes a JSON reply.
    ///
    /// - Throws: everything ``call(_:_:payload:timeout:meta:)`` throws, and
    ///   ``BusError/reply(status:code:message:)`` for a non-2xx reply,
    ///   ``BusError/invalidPayload(_:)`` when the reply is not a `Response`.
    public func request<Request: Encodable, Response: Decodable>(
        _ service: String, _ method: String, _ body: Request, as type: Response.Type = Response.self, timeout: Duration? = nil
    ) async throws(BusError) -> Response {
        let payload: [UInt8]
        do {
            payload = Array(try JSONEncoder.bus.encode(body))
        } catch {
            throw .invalidPayload("cannot encode \(Request.self): \(error)")
        }
        let reply = try await call(service, method, payload: payload, timeout: timeout)
        guard Status.isSuccess(reply.status) else {
            let error = reply.errorBody
            throw .reply(status: reply.status, code: error.code, message: error.message)
        }
        do {
            return try JSONDecoder().decode(Response.self, from: Data(reply.payload))
        } catch {
            throw .invalidPayload("reply of \(service).\(method) is not a \(Response.self): \(error)")
        }
    }

    /// Sends an arbitrary MDP request body on a dedicated connection and returns the reply
    /// frames as they come (for services that do not speak the bus's body format).
    public func rawRequest(_ service: String, body: Frames, timeout: Duration? = nil) async throws(BusError) -> Frames {
        let deadline = MonotonicTime.now + (timeout ?? options.requestTimeout)
        let io = self.io
        let handle = Locked<ObjectIdentifier?>(nil)
        let result: Result<Frames, BusError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let accepted = io.submit { loop in
                    do throws(ZMQError) {
                        let handler = try RawRequestHandler(loop: loop, service: service, body: body, deadline: deadline) {
                            continuation.resume(returning: $0)
                        }
                        loop.add(handler)
                        handle.withLock { $0 = ObjectIdentifier(handler) }
                    } catch {
                        continuation.resume(returning: .failure(.zmq(error)))
                    }
                }
                if !accepted { continuation.resume(returning: .failure(.closed)) }
            }
        } onCancel: {
            io.submit { loop in
                if let id = handle.withLock({ $0 }), let handler = loop.handlers[id] as? RawRequestHandler { handler.cancel(loop) }
            }
        }
        return try result.get()
    }

    /// The retained value of `topic`, or nil when the kernel holds none.
    public func retained(_ topic: String, timeout: Duration? = nil) async throws(BusError) -> RetainedValue? {
        let reply = try await call(
            KernelContract.serviceName, "retained", payload: Array("{\"topic\":\(Self.jsonString(topic))}".utf8), timeout: timeout)
        if reply.status == 404 { return nil }
        guard Status.isSuccess(reply.status) else {
            throw .reply(status: reply.status, code: reply.errorBody.code, message: reply.errorBody.message)
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.payload)) else {
            throw .malformed("bus.retained reply is not JSON")
        }
        return try RetainedValue.from(jsonObject: object)
    }

    /// Every retained value whose topic matches `pattern`, in topic order: the kernel's pages
    /// followed to the end (`timeout` is per page), a value too large for a page read by topic.
    public func retainedValues(matching pattern: String, timeout: Duration? = nil) async throws(BusError) -> [RetainedValue] {
        var result: [RetainedValue] = []
        var after: String?
        repeat {
            let cursor = after.map { ",\"after\":\(Self.jsonString($0))" } ?? ""
            let reply = try await call(
                KernelContract.serviceName, "retained", payload: Array("{\"pattern\":\(Self.jsonString(pattern))\(cursor),\"limit\":1000}".utf8),
                timeout: timeout)
            guard Status.isSuccess(reply.status) else {
                throw .reply(status: reply.status, code: reply.errorBody.code, message: reply.errorBody.message)
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any],
                let values = object["values"] as? [[String: Any]]
            else { throw .malformed("bus.retained reply has no values") }
            for value in values {
                if value["too_large"] as? Bool == true, let topic = value["topic"] as? String {
                    if let whole = try await retained(topic, timeout: timeout) { result.append(whole) }
                } else {
                    result.append(try RetainedValue.from(jsonObject: value))
                }
            }
            let next = object["next"] as? String
            guard next == nil || next != after else { throw .malformed("bus.retained answered the same cursor twice") }
            after = next
        } while after != nil
        return result
    }

    /// Every registered service (`bus.services`).
    public func services(timeout: Duration? = nil) async throws(BusError) -> [ServiceSnapshot] {
        struct Reply: Decodable { var services: [ServiceSnapshot] }
        return try await request(KernelContract.serviceName, "services", [String: String](), as: Reply.self, timeout: timeout).services
    }

    static func jsonString(_ text: String) -> String {
        let data = (try? JSONEncoder.bus.encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
