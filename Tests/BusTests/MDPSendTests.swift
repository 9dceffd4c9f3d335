import CZeroMQ
import Testing

@testable import BusWire
@testable import BusZMQ

/// The broker's REQUEST and client replies written frame by frame on a real ROUTER
/// (`ZMQ_ROUTER_MANDATORY`, as the kernel's) arrive as the frame lists the builders make, and a
/// send to a peer that is not there sends nothing.
struct MDPSendTests {
    @Test func requestAndClientReply_writtenFrameByFrame_arriveAsTheBuildersFrames() throws {
        try withKnownPeer(Array("peer-1".utf8)) { router, peer, peerID in
            let client: [UInt8] = [0, 0, 0, 7]
            let large = [UInt8](repeating: 0x62, count: 300)
            let bodies: [Frames] = [[Array("echo".utf8), [], large], [large], []]
            for body in bodies {
                // As frames, and a one-frame body also in a message.
                let forms: [MessageBody] = body.count == 1 ? [.frames(body), .message(ZMQMessage(large))] : [.frames(body)]
                for form in forms {
                    #expect(try MDP.sendRequest(to: peerID, client: client, body: form, on: router))
                    let request = try #require(try peer.receive(dontWait: false))
                    #expect(request == Array(MDP.request(to: peerID, client: client, body: body).dropFirst()))

                    let serviceFrame = Array("echo".utf8)
                    #expect(try MDP.sendClientReply(to: peerID, serviceFrame: serviceFrame, body: form, on: router))
                    let reply = try #require(try peer.receive(dontWait: false))
                    #expect(reply == Array(MDP.clientReply(to: peerID, serviceFrame: serviceFrame, body: body).dropFirst()))
                }
            }
        }
    }

    @Test func sendToAGonePeer_throwsUnroutable_andSendsNothing() throws {
        try withKnownPeer(Array("peer-2".utf8)) { router, peer, peerID in
            let body: MessageBody = .frames([Array("echo".utf8), [], Array("{}".utf8)])
            #expect(throws: ZMQError.self) {
                try MDP.sendRequest(to: Array("nobody".utf8), client: [1], body: body, on: router)
            }
            #expect(throws: ZMQError.self) {
                try MDP.sendClientReply(to: Array("nobody".utf8), serviceFrame: Array("echo".utf8), body: body, on: router)
            }
            // Nothing of the refused messages is pending on the ROUTER: the next one goes out whole.
            #expect(try MDP.sendClientReply(to: peerID, serviceFrame: Array("echo".utf8), body: body, on: router))
            let reply = try #require(try peer.receive(dontWait: false))
            #expect(reply == Array(MDP.clientReply(to: peerID, serviceFrame: Array("echo".utf8), body: body.frames).dropFirst()))
        }
    }

    /// A message body keeps its bytes after it was sent (libzmq took a second reference to its
    /// buffer, not the message), and when a full or peerless socket refused it: the kernel
    /// answers an error in the form of a request it already sent.
    @Test func messageBody_keepsItsBytes_whenSent_andWhenRefused() throws {
        let bytes = [UInt8](repeating: 0x63, count: 10_000)
        let message = ZMQMessage(bytes)
        try withKnownPeer(Array("peer-3".utf8)) { router, peer, peerID in
            for _ in 0..<2 {
                #expect(try MDP.sendClientReply(to: peerID, serviceFrame: Array("echo".utf8), body: .message(message), on: router))
                let reply = try #require(try peer.receive(dontWait: false))
                #expect(reply.last == bytes)
                #expect(message.bytes == bytes)
            }
        }
        // A DEALER with no peer refuses at once (EAGAIN): nothing sent, nothing lost.
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let lonely = try ZMQSocket(context, .dealer)
        defer { lonely.close() }
        #expect(try lonely.send(message, more: false) == false)
        #expect(message.bytes == bytes)
    }

    /// A ROUTER as the kernel's (`ZMQ_ROUTER_MANDATORY`) and a DEALER with routing id `peerID`
    /// that it has read from (a ROUTER knows a peer once it has).
    private func withKnownPeer(_ peerID: [UInt8], _ body: (ZMQSocket, ZMQSocket, [UInt8]) throws -> Void) throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let endpoint = "inproc://mdp-send-\(UInt64.random(in: 0...UInt64.max))"
        let router = try ZMQSocket(context, .router)
        defer { router.close() }
        try router.set(ZMQ_ROUTER_MANDATORY, 1)
        try router.bind(endpoint)
        let peer = try ZMQSocket(context, .dealer)
        defer { peer.close() }
        try peer.set(ZMQ_ROUTING_ID, bytes: peerID)
        try peer.connect(endpoint)
        #expect(try peer.send([Array("hello".utf8)], dontWait: false))
        #expect(try router.receive(dontWait: false) == [peerID, Array("hello".utf8)])
        try body(router, peer, peerID)
    }
}
