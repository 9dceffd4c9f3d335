import BusSupport
import BusZMQ

/// Majordomo Protocol 7/MDP (MDP/0.1: `MDPC01`, `MDPW01`) frame layouts, as seen by the broker's ROUTER
/// (whose first frame is the peer's routing id) and by clients and workers (without it).
package enum MDP {
    package static let client: [UInt8] = Array("MDPC01".utf8)
    package static let worker: [UInt8] = Array("MDPW01".utf8)

    /// Worker commands (the third frame of a worker message).
    package enum Command: UInt8, Sendable {
        case ready = 1, request = 2, reply = 3, heartbeat = 4, disconnect = 5
    }

    /// A message a broker's ROUTER received, classified.
    package enum Inbound: Equatable, Sendable {
        /// `[id][""][MDPC01][service][body...]`
        case clientRequest(sender: [UInt8], service: String, body: Frames)
        /// `[id][""][MDPW01][0x01][service][metadata?]`
        case ready(sender: [UInt8], service: String, metadata: [UInt8]?)
        /// `[id][""][MDPW01][0x03][client][""][body...]`
        case reply(sender: [UInt8], client: [UInt8], body: Frames)
        case heartbeat(sender: [UInt8])
        case disconnect(sender: [UInt8])
    }

    /// The kind of a well-formed ROUTER message (``shape(_:)``), before its frames are cut.
    package enum Shape: Sendable {
        case clientRequest(service: String)
        case ready(service: String)
        case reply
        case heartbeat
        case disconnect
    }

    /// Classifies a ROUTER message; throws ``BusError/malformed(_:)`` with the reason.
    package static func parseInbound(_ frames: consuming Frames) throws(BusError) -> Inbound {
        inbound(frames, try shape(frames))
    }

    /// Checks a ROUTER message and says what it is without copying anything of it; throws
    /// ``BusError/malformed(_:)`` with the reason.
    package static func shape(_ frames: borrowing Frames) throws(BusError) -> Shape {
        guard frames.count >= 3 else { throw .malformed("MDP message has \(frames.count) frames, needs at least 3") }
        guard frames[1].isEmpty else { throw .malformed("MDP message lacks the empty delimiter frame") }
        let header = frames[2]
        if header == client {
            guard frames.count >= 4 else { throw .malformed("MDP client request has no service frame") }
            guard let service = UTF8Text.string(frames[3]), !service.isEmpty else {
                throw .malformed("MDP service name is empty or not UTF-8")
            }
            return .clientRequest(service: service)
        }
        guard header == worker else {
            let shown = String(decoding: header.prefix(16), as: UTF8.self)
            throw .malformed("unknown protocol header '\(shown)' (expected MDPC01 or MDPW01)")
        }
        guard frames.count >= 4, frames[3].count == 1, let command = Command(rawValue: frames[3][0]) else {
            throw .malformed("MDP worker message has no valid command frame")
        }
        switch command {
        case .ready:
            guard frames.count >= 5, let service = UTF8Text.string(frames[4]), !service.isEmpty
            else { throw .malformed("MDP READY has no service name") }
            return .ready(service: service)
        case .reply:
            guard frames.count >= 6, frames[5].isEmpty else {
                throw .malformed("MDP REPLY needs [client][empty][body...]")
            }
            return .reply
        case .heartbeat: return .heartbeat
        case .disconnect: return .disconnect
        case .request: throw .malformed("MDP REQUEST is sent by brokers, not to them")
        }
    }

    /// The message ``shape(_:)`` classified as `shape`. A body is the message's own frame list
    /// with the header frames cut off in place: when the caller hands over its only reference
    /// (the kernel does), no list is copied.
    package static func inbound(_ frames: consuming Frames, _ shape: Shape) -> Inbound {
        let sender = frames[0]
        switch shape {
        case .clientRequest(let service):
            frames.removeFirst(4)
            return .clientRequest(sender: sender, service: service, body: frames)
        case .ready(let service):
            return .ready(sender: sender, service: service, metadata: frames.count >= 6 ? frames[5] : nil)
        case .reply:
            let client = frames[4]
            frames.removeFirst(6)
            return .reply(sender: sender, client: client, body: frames)
        case .heartbeat: return .heartbeat(sender: sender)
        case .disconnect: return .disconnect(sender: sender)
        }
    }

    // MARK: builders (without the ROUTER routing id unless named `to`)
    // Every request crosses four of these: each builds its message in one allocation, with the
    // constant frames shared (an array literal followed by `+ body` made three).

    /// The one-byte command frames, made once.
    private static let commandFrames: [[UInt8]] = (0...5).map { [UInt8($0)] }

    static func frame(_ command: Command) -> [UInt8] { commandFrames[Int(command.rawValue)] }

    /// `head` then `body` in one allocation (`head` is a literal the optimizer keeps on the
    /// stack: it does not escape).
    @inline(__always)
    private static func message(_ head: [[UInt8]], body: Frames) -> Frames {
        var frames: Frames = []
        frames.reserveCapacity(head.count + body.count)
        frames.append(contentsOf: head)
        frames.append(contentsOf: body)
        return frames
    }

    /// Broker -> client: `[id][""][MDPC01][service][body...]`.
    package static func clientReply(to client: [UInt8], service: String, body: Frames) -> Frames {
        clientReply(to: client, serviceFrame: Array(service.utf8), body: body)
    }

    /// ``clientReply(to:service:body:)`` with the service name's frame made beforehand.
    package static func clientReply(to client: [UInt8], serviceFrame: [UInt8], body: Frames) -> Frames {
        message([client, [], Self.client, serviceFrame], body: body)
    }

    /// Broker -> worker: `[id][""][MDPW01][0x02][client][""][body...]`.
    package static func request(to worker: [UInt8], client: [UInt8], body: Frames) -> Frames {
        message([worker, [], Self.worker, frame(.request), client, []], body: body)
    }

    /// Broker -> worker heartbeat or disconnect.
    package static func command(to worker: [UInt8], _ command: Command) -> Frames {
        [worker, [], Self.worker, frame(command)]
    }

    /// Client (DEALER) -> broker: `[""][MDPC01][service][body...]`.
    package static func clientRequest(service: String, body: Frames) -> Frames {
        message([[], Self.client, Array(service.utf8)], body: body)
    }

    /// Sends ``clientRequest(service:body:)``'s frames on `socket` one by one without building
    /// the list (the service name from the string's own storage), without waiting. False when
    /// the socket would block, and then nothing was sent.
    package static func sendClientRequest(service: String, body: Frames, on socket: ZMQSocket) throws(ZMQError) -> Bool {
        // Only the first frame can hit EAGAIN: libzmq queues the rest atomically.
        guard try socket.sendFrame([], more: true, dontWait: true) else { return false }
        _ = try socket.sendFrame(Self.client, more: true, dontWait: true)
        _ = try socket.send(utf8: service, more: !body.isEmpty)
        for (index, frame) in body.enumerated() {
            _ = try socket.sendFrame(frame, more: index < body.count - 1, dontWait: true)
        }
        return true
    }

    /// Sends ``request(to:client:body:)``'s frames on the broker's ROUTER one by one without
    /// building the list, without waiting. False when the worker's queue is full, and then
    /// nothing was sent; throws `EHOSTUNREACH` (`ZMQ_ROUTER_MANDATORY`) when the worker is gone,
    /// also before anything was sent.
    package static func sendRequest(to worker: [UInt8], client: [UInt8], body: MessageBody, on socket: ZMQSocket) throws(ZMQError) -> Bool {
        // Only the first frame (the routing id) can fail: a ROUTER looks its peer up there and
        // queues the rest of the message atomically, or drops all of it if the peer's pipe
        // went away meanwhile (libzmq rolls a partial message back); nothing is half sent.
        guard try socket.sendFrame(worker, more: true, dontWait: true) else { return false }
        _ = try socket.sendFrame([], more: true, dontWait: true)
        _ = try socket.sendFrame(Self.worker, more: true, dontWait: true)
        _ = try socket.sendFrame(frame(.request), more: true, dontWait: true)
        _ = try socket.sendFrame(client, more: true, dontWait: true)
        _ = try socket.sendFrame([], more: !body.isEmpty, dontWait: true)
        try sendBody(body, on: socket)
        return true
    }

    /// Sends ``clientReply(to:serviceFrame:body:)``'s frames on the broker's ROUTER one by one
    /// without building the list; like ``sendRequest(to:client:body:on:)``.
    package static func sendClientReply(to client: [UInt8], serviceFrame: [UInt8], body: MessageBody, on socket: ZMQSocket) throws(ZMQError) -> Bool {
        guard try socket.sendFrame(client, more: true, dontWait: true) else { return false }
        _ = try socket.sendFrame([], more: true, dontWait: true)
        _ = try socket.sendFrame(Self.client, more: true, dontWait: true)
        _ = try socket.sendFrame(serviceFrame, more: !body.isEmpty, dontWait: true)
        try sendBody(body, on: socket)
        return true
    }

    @inline(__always)
    private static func sendBody(_ body: MessageBody, on socket: ZMQSocket) throws(ZMQError) {
        switch body {
        case .frames(let frames):
            let last = frames.count - 1
            for index in frames.indices {
                _ = try socket.sendFrame(frames[index], more: index < last, dontWait: true)
            }
        case .message(let message):
            // Queued atomically with the first frame: libzmq never refuses the rest.
            _ = try socket.send(message, more: false)
        }
    }

    /// Worker (DEALER) -> broker.
    package static func workerReady(service: String, metadata: [UInt8]) -> Frames {
        [[], Self.worker, frame(.ready), Array(service.utf8), metadata]
    }

    package static func workerReply(client: [UInt8], body: Frames) -> Frames {
        message([[], Self.worker, frame(.reply), client, []], body: body)
    }

    package static func workerCommand(_ command: Command) -> Frames {
        [[], Self.worker, frame(command)]
    }
}
