import BusSupport
import BusWire
import BusZMQ
import Foundation

/// The outcome of a request as the I/O thread reports it.
enum RequestOutcome: Sendable {
    case reply(ReplyBody)
    /// Never sent: no connection to the kernel before the deadline (with the handshake
    /// problem, when a handshake failed).
    case unreachable(String?)
    /// Sent, but no reply before the deadline.
    case timeout
    case failed(BusError)
}

/// The process's request DEALER towards the kernel's ROUTER (MDP client, `MDPC01`). Many
/// requests can be in flight on it; replies are matched by the `id` in the reply meta: a
/// number per request (the client's own, in binary meta or as a decimal string in JSON), or
/// the id the caller gave.
final class RequesterHandler: IOHandler {
    typealias Completion = @Sendable (RequestOutcome) -> Void

    struct Pending {
        var service: String
        /// The id the caller gave (sent instead of the number).
        var customID: String?
        /// The request until it is sent (then nil): encoded when it goes out, straight into
        /// the message libzmq sends.
        var request: RequestBody?
        /// Its meta goes as ``BinaryMeta`` (no id of the caller's own).
        var binaryMeta: Bool
        var deadline: MonotonicTime
        var sent: Bool
        var completion: Completion
    }

    let socket: ZMQSocket
    /// Watches the socket's connection.
    private let watch: MonitorHandler
    /// Replies are received into these and read in place.
    private let parts: ZMQParts
    /// The `from` of the last reply in binary meta (a caller's replies mostly come from one
    /// worker instance, whose name is longer than a string holds without an allocation).
    private var lastFrom = RecentText()
    private var pending: [UInt64: Pending] = [:]
    /// The number of each pending request sent with the caller's own id.
    private var customIDs: [String: UInt64] = [:]
    /// Ids not yet handed to libzmq (no connection, or its queue full), oldest first.
    private var unsent: [UInt64] = []
    /// No pending request's deadline is earlier: a lower bound (answered requests leave it
    /// early), made exact when it is reached. The loop asks ``tick(_:now:)`` every turn, and
    /// scanning every pending request each time copied each of them (64 per turn at 64 in flight).
    private var earliest: MonotonicTime?

    /// `ZMQ_IMMEDIATE` stays off (with it, libzmq 4.3 replaces the socket's inbound pipe at a
    /// reconnect and can abort the process when that lands between two frames of a reply, as
    /// ``SocketTuning/subscriber`` tells). Instead requests are handed to libzmq only while
    /// the socket's monitor reports a connection: one sent while the kernel is away would wait
    /// in libzmq's queue and reach a kernel that comes back after its caller gave up. Until
    /// then a request waits here, and its deadline reports it as never sent.
    init(loop: IOLoop) throws(ZMQError) {
        (socket, watch) = try loop.connectWatched(.dealer, to: loop.endpoints.requests, tuning: .default)
        parts = ZMQParts(capacity: 16)
    }

    /// Whether the socket has a connection (its monitor's word). When it comes up, the next
    /// turn's ``tick(_:now:)`` sends what waited: the monitor's handler runs before this one.
    private var isConnected: Bool { watch.isConnected }

    func send(id: UInt64, customID: String?, service: String, request: RequestBody, deadline: MonotonicTime, completion: @escaping Completion) {
        var sent = false
        let binaryMeta = customID == nil
        if unsent.isEmpty, isConnected {
            // Nothing waits before it: straight to libzmq, without going through `unsent`.
            do {
                sent = try Self.send(request, id: id, binaryMeta: binaryMeta, service: service, on: socket)
            } catch {
                completion(.failed(.zmq(error)))
                return
            }
        }
        pending[id] = Pending(
            service: service, customID: customID, request: sent ? nil : request, binaryMeta: binaryMeta, deadline: deadline, sent: sent,
            completion: completion)
        if let customID { customIDs[customID] = id }
        if earliest == nil || deadline < earliest! { earliest = deadline }
        if !sent {
            unsent.append(id)
            flush()
        }
    }

    /// Sends a request in the one-frame form, written straight into its message (the three
    /// frames when it does not fit that form); false when the socket would block. Without an
    /// id of the caller's own (`request.meta.id` nil), `id` is the request's id: binary in
    /// binary meta, its decimal text in JSON meta (made only then).
    private static func send(_ request: RequestBody, id: UInt64, binaryMeta: Bool, service: String, on socket: ZMQSocket) throws(ZMQError) -> Bool {
        if binaryMeta, let encoding = OneFrameEncoding(request, binaryID: id) {
            return try MDP.sendClientRequest(service: service, body: encoding, on: socket)
        }
        // JSON meta (binary meta cannot carry this one's fields), or too long a method for the
        // one-frame form.
        var request = request
        if request.meta.id == nil { request.meta.id = String(id) }
        if let encoding = OneFrameEncoding(request, binaryMeta: false) {
            return try MDP.sendClientRequest(service: service, body: encoding, on: socket)
        }
        return try MDP.sendClientRequest(service: service, body: request.encode(oneFrame: true, binaryMeta: binaryMeta), on: socket)
    }

    func cancel(id: UInt64) {
        unsent.removeAll { $0 == id }
        remove(at: pending.index(forKey: id))?.completion(.failed(.cancelled))
    }

    /// Takes a pending request out (nil index: none).
    private func remove(at index: Dictionary<UInt64, Pending>.Index?) -> Pending? {
        guard let index else { return nil }
        let request = pending.remove(at: index).value
        if let customID = request.customID { customIDs[customID] = nil }
        return request
    }

    /// The pending request a reply's id names: the caller's own id, else the number. Binary
    /// meta carries only numbers (the caller's own ids go as JSON).
    private func pendingIndex(of id: String, binary: Bool, service: ArraySlice<UInt8>) -> Dictionary<UInt64, Pending>.Index? {
        if !binary, !customIDs.isEmpty, let number = customIDs[id], let index = pending.index(forKey: number),
            pending.values[index].service.utf8.elementsEqual(service)
        {
            return index
        }
        guard let number = BinaryMeta.number(id), let index = pending.index(forKey: number), pending.values[index].customID == nil else { return nil }
        return index
    }

    private func flush() {
        guard isConnected else { return }
        var done = 0
        defer { unsent.removeFirst(done) }
        for id in unsent {
            // Gone (cancelled), or sent already.
            guard let index = pending.index(forKey: id), let request = pending.values[index].request else {
                done += 1
                continue
            }
            do {
                let waiting = pending.values[index]
                guard try Self.send(request, id: id, binaryMeta: waiting.binaryMeta, service: waiting.service, on: socket) else { return }
            } catch {
                let request = remove(at: index)
                done += 1
                request?.completion(.failed(.zmq(error)))
                continue
            }
            pending.values[index].sent = true
            // Sent: the request is not needed any more.
            pending.values[index].request = nil
            done += 1
        }
    }

    func readable(_ loop: IOLoop) {
        for _ in 0..<1024 {
            guard let count = (try? parts.receive(socket)) ?? nil else { return }
            // A bus worker's reply to a bus caller: `[""][MDPC01][service][one frame, binary
            // meta]`, read where libzmq received it.
            if count == 4, parts.size(0) == 0, MDP.client.hasSameBytes(as: parts.bytes(1)),
                let (reply, number) = ReplyBody.decodeBinaryOneFrame(parts.bytes(3), name: { lastFrom.string($0) })
            {
                if let index = pending.index(forKey: number), pending.values[index].customID == nil {
                    remove(at: index)?.completion(.reply(reply))
                }
                continue
            }
            // Past the last slot the frames overwrite each other in it: the slots before it hold
            // the header and the three body frames a reply is read from (the rest is ignored, as
            // the decoder ignores it).
            handle((0..<(count <= parts.capacity ? count : parts.capacity - 1)).map { Array(parts.bytes($0)) }, loop)
        }
    }

    /// Any other reply, as frames.
    private func handle(_ frames: Frames, _ loop: IOLoop) {
        guard frames.count >= 3, frames[0].isEmpty, frames[1] == MDP.client else {
            loop.logger.warning("dropped a reply that is not MDPC01", metadata: ["frames": String(frames.count)])
            return
        }
        let reply: ReplyBody
        do {
            reply = try ReplyBody.decode(frames, from: 3)
        } catch {
            loop.logger.warning("dropped a reply from \(String(decoding: frames[2], as: UTF8.self)): \(error)")
            return
        }
        let binary = ReplyBody.hasBinaryMeta(frames, from: 3)
        var index = reply.meta.id.flatMap { pendingIndex(of: $0, binary: binary, service: frames[2][...]) }
        if index == nil {
            // A reply without our id (an unmodified worker): match it when only one
            // request to that service is waiting.
            let service = String(decoding: frames[2], as: UTF8.self)
            let candidates = pending.indices.filter { pending.values[$0].service == service && pending.values[$0].sent }
            index = candidates.count == 1 ? candidates[0] : nil
        }
        guard let index else { return }
        remove(at: index)?.completion(.reply(reply))
    }

    func tick(_ loop: IOLoop, now: MonotonicTime) -> MonotonicTime? {
        if !unsent.isEmpty { flush() }
        var next = earliest
        if let earliest, earliest <= now {
            next = nil
            for (id, request) in pending {
                if request.deadline <= now {
                    _ = remove(at: pending.index(forKey: id))
                    unsent.removeAll { $0 == id }
                    request.completion(request.sent ? .timeout : .unreachable(loop.connectionProblem(loop.endpoints.requests)))
                } else if next == nil || request.deadline < next! {
                    next = request.deadline
                }
            }
            self.earliest = next
        }
        // A full queue is retried; a missing connection waits for the monitor's word.
        if !unsent.isEmpty, isConnected {
            let retry = now.advanced(by: 20_000_000)
            if next == nil || retry < next! { next = retry }
        }
        return next
    }

    func close(_ loop: IOLoop) {
        for (_, request) in pending { request.completion(.failed(.closed)) }
        pending.removeAll()
        customIDs.removeAll()
        loop.release(socket)
        socket.close()
        parts.close()
    }
}

/// A one-shot request on its own DEALER, for bodies that are not ours (talking to unmodified
/// MDP workers): the reply is whatever frames come back.
final class RawRequestHandler: IOHandler {
    let socket: ZMQSocket
    let deadline: MonotonicTime
    let service: String
    let timeout: Duration
    private var sent = false
    private var frames: Frames
    private var completion: (@Sendable (Result<Frames, BusError>) -> Void)?

    init(
        loop: IOLoop, service: String, body: Frames, deadline: MonotonicTime,
        completion: @escaping @Sendable (Result<Frames, BusError>) -> Void
    ) throws(ZMQError) {
        socket = try loop.connect(.dealer, to: loop.endpoints.requests, tuning: .client)
        self.deadline = deadline
        self.service = service
        self.timeout = deadline - .now
        self.frames = MDP.clientRequest(service: service, body: body)
        self.completion = completion
        trySend()
    }

    private func trySend() {
        guard !sent else { return }
        if (try? socket.send(frames)) == true { sent = true }
    }

    func readable(_ loop: IOLoop) {
        guard let reply = try? socket.receive() else { return }
        guard reply.count >= 3, reply[0].isEmpty, reply[1] == MDP.client else { return }
        completion?(.success(Array(reply.dropFirst(3))))
        completion = nil
        loop.remove(self)
    }

    func tick(_ loop: IOLoop, now: MonotonicTime) -> MonotonicTime? {
        trySend()
        if now >= deadline {
            let seconds = Double(timeout.wholeMilliseconds) / 1000
            completion?(
                .failure(
                    sent
                        ? .timeout(service: service, method: "(raw)", seconds: seconds)
                        : .unreachable(endpoint: loop.endpoints.requests, reason: loop.connectionProblem(loop.endpoints.requests) ?? "no connection"))
            )
            completion = nil
            loop.remove(self)
            return nil
        }
        return sent ? deadline : min(deadline, now.advanced(by: 20_000_000))
    }

    /// Ends the request early (the caller's task was cancelled).
    func cancel(_ loop: IOLoop) {
        completion?(.failure(.cancelled))
        completion = nil
        loop.remove(self)
    }

    func close(_ loop: IOLoop) {
        completion?(.failure(.closed))
        completion = nil
        loop.release(socket)
        socket.close()
    }
}
