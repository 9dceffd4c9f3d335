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
                #expect(try MDP.sendRequest(to: peerID, client: client, body: body, on: router))
                let request = try #require(try peer.receive(dontWait: false))
                #expect(request == Array(MDP.request(to: peerID, client: client, body: body).dropFirst()))

                let serviceFrame = Array("echo".utf8)
                #expect(try MDP.sendClientReply(to: peerID, serviceFrame: serviceFrame, body: body, on: router))
                let reply = try #require(try peer.receive(dontWait: false))
                #expect(reply == Array(MDP.clientReply(to: peerID, serviceFrame: serviceFrame, body: body).dropFirst()))
            }
        }
    }

    @Test func sendToAGonePeer_throwsUnroutable_andSendsNothing() throws {
        try withKnownPeer(Array("peer-2".utf8)) { router, peer, peerID in
            let body: Frames = [Array("echo".utf8), [], Array("{}".utf8)]
            #expect(throws: ZMQError.self) {
                try MDP.sendRequest(to: Array("nobody".utf8), client: [1], body: body, on: router)
            }
            #expect(throws: ZMQError.self) {
                try MDP.sendClientReply(to: Array("nobody".utf8), serviceFrame: Array("echo".utf8), body: body, on: router)
            }
            // Nothing of the refused messages is pending on the ROUTER: the next one goes out whole.
            #expect(try MDP.sendClientReply(to: peerID, serviceFrame: Array("echo".utf8), body: body, on: router))
            let reply = try #require(try peer.receive(dontWait: false))
            #expect(reply == Array(MDP.clientReply(to: peerID, serviceFrame: Array("echo".utf8), body: body).dropFirst()))
        }
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
