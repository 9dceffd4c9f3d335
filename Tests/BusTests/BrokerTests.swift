import Bus
import BusKernel
import BusWire
import BusZMQ
import Foundation
import Testing

/// The Majordomo broker driven with frames and a hand-moved clock: no sockets, no sleeps.
struct BrokerTests {
    let t0 = MonotonicTime.now
    let client: [UInt8] = [0, 0, 0, 1]
    let w1: [UInt8] = [0, 0, 0, 2]
    let w2: [UInt8] = [0, 0, 0, 3]

    func request(_ service: String, from client: [UInt8], id: String = "r1", timeoutMs: Int? = nil) -> Frames {
        [client, [], MDP.client, Array(service.utf8)]
            + RequestBody(method: "echo", meta: RequestMeta(id: id, timeoutMs: timeoutMs), payload: Array("{}".utf8)).encode()
    }

    func ready(_ worker: [UInt8], _ service: String, instance: String? = nil) -> Frames {
        var frames: Frames = [worker, [], MDP.worker, [MDP.Command.ready.rawValue], Array(service.utf8)]
        if let instance { frames.append(Array(#"{"instance":"\#(instance)"}"#.utf8)) }
        return frames
    }

    func reply(_ worker: [UInt8], to client: [UInt8], status: String = "200") -> Frames {
        [worker, [], MDP.worker, [MDP.Command.reply.rawValue], client, [], Array(status.utf8), Array("{}".utf8), []]
    }

    func sends(_ actions: [Broker.Action]) -> [Frames] {
        actions.compactMap(\.frames)
    }

    func published(_ actions: [Broker.Action]) -> [String] {
        actions.compactMap { if case .publish(let t, _) = $0 { return t } else { return nil } }
    }

    func replyStatus(_ frames: Frames) -> (Int, String)? {
        guard frames.count >= 5, frames[2] == MDP.client, let body = try? ReplyBody.decode(Array(frames.dropFirst(4))) else { return nil }
        return (body.status, body.errorBody.code)
    }

    @Test func request_withoutWorker_isQueued_thenDispatchedOnReady() {
        var broker = Broker()
        #expect(sends(broker.receive(request("echo", from: client), now: t0)).isEmpty)
        let actions = broker.receive(ready(w1, "echo"), now: t0 + .milliseconds(10))
        let out = sends(actions)
        #expect(out.count == 1)
        #expect(out[0][0] == w1)
        #expect(out[0][3] == [MDP.Command.request.rawValue])
        #expect(out[0][4] == client)
        #expect(published(actions) == ["bus.service.up"])
    }

    @Test func queuedRequest_pastDeadline_gets503NoSuchService() {
        var broker = Broker()
        _ = broker.receive(request("ghost", from: client, timeoutMs: 1000), now: t0)
        #expect(sends(broker.tick(now: t0 + .milliseconds(500))).filter { $0[0] == client }.isEmpty)
        let out = sends(broker.tick(now: t0 + .milliseconds(900))).filter { $0[0] == client }
        #expect(out.count == 1)
        #expect(replyStatus(out[0])?.0 == 503)
        #expect(replyStatus(out[0])?.1 == "no_such_service")
    }

    @Test func queuedRequests_expireEachAtItsOwnDeadline_andNextDeadlineFollowsThem() {
        var broker = Broker()
        let other: [UInt8] = [0, 0, 0, 9]
        _ = broker.receive(request("ghost", from: client, id: "a", timeoutMs: 2000), now: t0)
        _ = broker.receive(request("ghost", from: other, id: "b", timeoutMs: 1000), now: t0)
        _ = broker.tick(now: t0)  // the first heartbeat round
        // Deadlines: 2000 - 250 and 1000 - 200 ms; the shell is asked to come back at the earlier.
        #expect(broker.nextDeadline(now: t0) == t0 + .milliseconds(800))
        let first = sends(broker.tick(now: t0 + .milliseconds(800)))
        #expect(first.map { $0[0] } == [other])
        #expect(broker.nextDeadline(now: t0 + .milliseconds(800)) == t0 + .milliseconds(1000))  // the next heartbeat
        _ = broker.tick(now: t0 + .milliseconds(1000))
        #expect(broker.nextDeadline(now: t0 + .milliseconds(1000)) == t0 + .milliseconds(1750))
        let second = sends(broker.tick(now: t0 + .milliseconds(1750))).filter { $0[0] == client }
        #expect(second.count == 1)
        #expect(replyStatus(second[0])?.0 == 503)
    }

    @Test func queuedRequest_dispatchedBeforeItsDeadline_leavesNoTimeoutBehind() {
        var broker = Broker()
        _ = broker.receive(request("echo", from: client, timeoutMs: 1000), now: t0)
        _ = broker.tick(now: t0)
        #expect(broker.nextDeadline(now: t0) == t0 + .milliseconds(800))
        _ = broker.receive(ready(w1, "echo"), now: t0 + .milliseconds(100))
        // The bound may still name the dispatched request's deadline; reaching it sends the
        // caller nothing, and the next deadline is exact again.
        #expect(sends(broker.tick(now: t0 + .milliseconds(800))).filter { $0[0] == client }.isEmpty)
        #expect(broker.nextDeadline(now: t0 + .milliseconds(800)) == t0 + .milliseconds(1000))
        let out = sends(broker.receive(reply(w1, to: client), now: t0 + .milliseconds(900)))
        #expect(out.count == 1 && out[0][0] == client)
    }

    @Test func queuedRequest_whileAllWorkersBusy_gets504() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo"), now: t0)
        _ = broker.receive(request("echo", from: client, id: "a"), now: t0)
        _ = broker.receive(request("echo", from: client, id: "b", timeoutMs: 500), now: t0)
        _ = broker.receive([w1, [], MDP.worker, [MDP.Command.heartbeat.rawValue]], now: t0 + .milliseconds(400))
        let out = sends(broker.tick(now: t0 + .milliseconds(450))).filter { $0[0] == client }
        #expect(out.count == 1)
        #expect(replyStatus(out[0])?.0 == 504)
    }

    @Test func twoWorkers_areUsedInTurn() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo"), now: t0)
        _ = broker.receive(ready(w2, "echo"), now: t0)
        let first = sends(broker.receive(request("echo", from: client, id: "1"), now: t0))
        let second = sends(broker.receive(request("echo", from: client, id: "2"), now: t0))
        #expect(first.first?[0] == w1)
        #expect(second.first?[0] == w2)
        let afterReply = sends(broker.receive(reply(w1, to: client), now: t0))
        #expect(afterReply.count == 1 && afterReply[0][0] == client)
        let third = sends(broker.receive(request("echo", from: client, id: "3"), now: t0))
        #expect(third.first?[0] == w1)
    }

    @Test func workerExpiry_midRequest_answersCallerAtOnce_andPublishesDown() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo"), now: t0)
        _ = broker.receive(request("echo", from: client, timeoutMs: 60_000), now: t0)
        let expiry = broker.config.heartbeatInterval * broker.config.liveness
        let actions = broker.tick(now: t0 + expiry + .milliseconds(1))
        let toClient = sends(actions).filter { $0[0] == client }
        #expect(toClient.count == 1)
        #expect(replyStatus(toClient[0])?.1 == "worker_lost")
        #expect(published(actions) == ["bus.service.down"])
    }

    @Test func heartbeat_keepsWorkerAlive_andTickSendsHeartbeats() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo"), now: t0)
        let hb = sends(broker.tick(now: t0))
        #expect(hb.contains { $0[0] == w1 && $0[3] == [MDP.Command.heartbeat.rawValue] })
        _ = broker.receive([w1, [], MDP.worker, [MDP.Command.heartbeat.rawValue]], now: t0 + .milliseconds(2500))
        let later = broker.tick(now: t0 + .milliseconds(4000))
        #expect(published(later).isEmpty)
        #expect(broker.liveServices == ["echo"])
    }

    @Test func mmi_answers200_404_501() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo"), now: t0)
        func mmi(_ service: String, _ name: String) -> String? {
            let out = sends(broker.receive([client, [], MDP.client, Array(service.utf8), Array(name.utf8)], now: t0))
            return out.first.map { String(decoding: $0[4], as: UTF8.self) }
        }
        #expect(mmi("mmi.service", "echo") == "200")
        #expect(mmi("mmi.service", "nope") == "404")
        #expect(mmi("mmi.service", "bus") == "200")
        #expect(mmi("mmi.discovery", "x") == "501")
    }

    @Test func kernelService_isHandedToTheShell() {
        var broker = Broker()
        let actions = broker.receive([client, [], MDP.client, Array("bus".utf8), Array("ping".utf8)], now: t0)
        #expect(actions == [.kernelRequest(client: client, body: [Array("ping".utf8)])])
    }

    @Test func malformedMessages_areRejected_clientsGet400() {
        var broker = Broker()
        for frames: Frames in [
            [client], [client, [1], MDP.client], [client, [], Array("MDPX01".utf8), []], [w1, [], MDP.worker, [9]],
            [w1, [], MDP.worker, [MDP.Command.request.rawValue]],
        ] {
            let actions = broker.receive(frames, now: t0)
            #expect(actions.contains { if case .rejected = $0 { return true } else { return false } })
        }
        let noService = broker.receive([client, [], MDP.client], now: t0)
        #expect(sends(noService).first.flatMap(replyStatus)?.0 == 400)
    }

    @Test func readyTwice_isAProtocolError() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo"), now: t0)
        let actions = broker.receive(ready(w1, "echo"), now: t0)
        #expect(sends(actions).contains { $0[0] == w1 && $0[3] == [MDP.Command.disconnect.rawValue] })
        #expect(broker.liveServices.isEmpty)
    }

    @Test func reservedServiceNames_cannotBeRegistered() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "bus"), now: t0)
        _ = broker.receive(ready(w2, "mmi.service"), now: t0)
        #expect(broker.liveServices.isEmpty)
    }

    @Test func disconnect_withRequestInFlight_drainsThenAcknowledges() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo", instance: "e1"), now: t0)
        _ = broker.receive(request("echo", from: client), now: t0)
        let leaving = broker.receive([w1, [], MDP.worker, [MDP.Command.disconnect.rawValue]], now: t0)
        #expect(sends(leaving).isEmpty)
        #expect(broker.liveServices.isEmpty)
        // New requests are not given to the draining worker.
        #expect(sends(broker.receive(request("echo", from: client, id: "r2"), now: t0)).isEmpty)
        let done = broker.receive(reply(w1, to: client), now: t0)
        #expect(sends(done).map { $0[0] } == [client, w1])
        #expect(sends(done).last?[3] == [MDP.Command.disconnect.rawValue])
        #expect(published(done) == ["bus.service.down"])
    }

    @Test func disconnect_whenIdle_isAcknowledgedAtOnce() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo"), now: t0)
        let actions = broker.receive([w1, [], MDP.worker, [MDP.Command.disconnect.rawValue]], now: t0)
        #expect(sends(actions).contains { $0[0] == w1 && $0[3] == [MDP.Command.disconnect.rawValue] })
        #expect(published(actions) == ["bus.service.down"])
    }

    /// The broker remembers the worker and the service it looked up last: a worker that left
    /// is not found again by its identity, and one registered again under the same identity is
    /// the new registration (its service's record included).
    @Test func workerThatLeft_isUnknown_evenRightAfterItsLastLookUp() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo"), now: t0)
        _ = broker.receive(request("echo", from: client), now: t0)
        _ = broker.receive(reply(w1, to: client), now: t0)
        _ = broker.receive([w1, [], MDP.worker, [MDP.Command.disconnect.rawValue]], now: t0)
        let late = broker.receive(reply(w1, to: client), now: t0)
        #expect(sends(late).contains { $0[0] == w1 && $0[3] == [MDP.Command.disconnect.rawValue] })
        #expect(late.contains { if case .rejected(let reason) = $0 { return reason.contains("unknown worker") } else { return false } })
        // Back under the same identity: requests reach it and its replies reach the caller.
        _ = broker.receive(ready(w1, "echo"), now: t0 + .milliseconds(1))
        let dispatched = sends(broker.receive(request("echo", from: client, id: "r2"), now: t0 + .milliseconds(2)))
        #expect(dispatched.contains { $0[0] == w1 && $0[3] == [MDP.Command.request.rawValue] })
        let answered = sends(broker.receive(reply(w1, to: client), now: t0 + .milliseconds(3)))
        #expect(answered.contains { $0[0] == client && $0[2] == MDP.client })
        #expect(broker.snapshot(now: t0 + .milliseconds(3)).first { $0.service == "echo" }?.instances.count == 1)
    }

    /// A service record removed while idle is not found again through the broker's memory of the
    /// service it looked up last: a request for it afterwards is queued in a new record, listed
    /// and answered at its deadline.
    @Test func serviceRemovedWhileIdle_isMadeAgainForItsNextRequest() {
        var broker = Broker()
        _ = broker.receive(request("ghost", from: client, timeoutMs: 1000), now: t0)
        #expect(sends(broker.tick(now: t0 + .seconds(1))).contains { replyStatus($0)?.0 == 503 })
        // Idle for five minutes: its record goes.
        _ = broker.tick(now: t0 + .seconds(302))
        #expect(broker.snapshot(now: t0 + .seconds(302)).isEmpty)
        _ = broker.receive(request("ghost", from: client, id: "r2", timeoutMs: 1000), now: t0 + .seconds(303))
        #expect(broker.snapshot(now: t0 + .seconds(303)).first { $0.service == "ghost" }?.queued == 1)
        let answered = sends(broker.tick(now: t0 + .seconds(304))).filter { $0[0] == client }
        #expect(answered.count == 1)
        #expect(answered.first.flatMap(replyStatus)?.1 == "no_such_service")
    }

    @Test func snapshot_listsInstancesAndCounters() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo", instance: "e1"), now: t0)
        _ = broker.receive(ready(w2, "echo", instance: "e1"), now: t0)
        _ = broker.receive(request("echo", from: client), now: t0)
        _ = broker.receive(reply(w1, to: client, status: "500"), now: t0 + .milliseconds(3))
        let snapshot = broker.snapshot(now: t0 + .seconds(1))
        #expect(snapshot.count == 1)
        let service = snapshot[0]
        #expect(service.instances.count == 1)
        #expect(service.instances[0].workers == 2)
        #expect(service.instances[0].handled == 1)
        #expect(service.instances[0].failed == 1)
        #expect(service.failed == 1)
        #expect(service.p50Us == 3000)
    }

    @Test func queueLimit_answers503Overloaded() {
        var config = Broker.Config()
        config.maxQueuedPerService = 2
        var broker = Broker(config: config)
        _ = broker.receive(request("x", from: client, id: "1"), now: t0)
        _ = broker.receive(request("x", from: client, id: "2"), now: t0)
        let out = sends(broker.receive(request("x", from: client, id: "3"), now: t0))
        #expect(out.first.flatMap(replyStatus)?.1 == "overloaded")
    }

    @Test func reply_forARequestTheWorkerDoesNotHold_isRejected() {
        var broker = Broker()
        let other: [UInt8] = [9, 9, 9, 9]
        _ = broker.receive(ready(w1, "echo"), now: t0)
        // No request in flight: a REPLY naming any client is refused, not routed.
        let spoofed = broker.receive(reply(w1, to: other), now: t0)
        #expect(sends(spoofed).isEmpty)
        #expect(spoofed.contains { if case .rejected = $0 { return true } else { return false } })
        // In flight for `client`: a REPLY naming another client is refused too.
        _ = broker.receive(request("echo", from: client), now: t0)
        #expect(sends(broker.receive(reply(w1, to: other), now: t0)).isEmpty)
        #expect(sends(broker.receive(reply(w1, to: client), now: t0)).first?[0] == client)
    }

    func readyWithCredit(_ worker: [UInt8], _ service: String, credit: Int) -> Frames {
        [
            worker, [], MDP.worker, [MDP.Command.ready.rawValue], Array(service.utf8),
            Array(#"{"instance":"i-\#(worker.last!)","credit":\#(credit)}"#.utf8),
        ]
    }

    @Test func credit_letsAWorkerHoldSeveralRequests_answeredInOrder() {
        var broker = Broker()
        _ = broker.receive(readyWithCredit(w1, "echo", credit: 3), now: t0)
        var sent = 0
        for id in 1...4 { sent += sends(broker.receive(request("echo", from: client, id: "\(id)"), now: t0)).count }
        #expect(sent == 3)  // the fourth waits for room
        #expect(broker.snapshot(now: t0).first?.queued == 1)
        let afterReply = sends(broker.receive(reply(w1, to: client), now: t0))
        #expect(afterReply.count == 2)  // the reply, then the queued request
        #expect(afterReply[1][0] == w1)
    }

    @Test func withoutCredit_aWorkerGetsOneRequestAtATime_as7MDPSays() {
        var broker = Broker()
        _ = broker.receive(ready(w1, "echo"), now: t0)
        #expect(sends(broker.receive(request("echo", from: client, id: "1"), now: t0)).count == 1)
        #expect(sends(broker.receive(request("echo", from: client, id: "2"), now: t0)).isEmpty)
    }

    @Test func dispatch_prefersTheLeastLoadedWorker() {
        var broker = Broker()
        _ = broker.receive(readyWithCredit(w1, "echo", credit: 10), now: t0)
        _ = broker.receive(readyWithCredit(w2, "echo", credit: 10), now: t0)
        // w1 gets one, w2 gets one, then w2 answers: the next goes to w2 (idle), not w1.
        _ = broker.receive(request("echo", from: client, id: "1"), now: t0)
        _ = broker.receive(request("echo", from: client, id: "2"), now: t0)
        _ = broker.receive(reply(w2, to: client), now: t0)
        let next = sends(broker.receive(request("echo", from: client, id: "3"), now: t0))
        #expect(next.first?[0] == w2)
    }

    @Test func workerLost_withSeveralInFlight_answersEveryCaller() {
        var broker = Broker()
        let other: [UInt8] = [7, 7, 7, 7]
        _ = broker.receive(readyWithCredit(w1, "echo", credit: 5), now: t0)
        _ = broker.receive(request("echo", from: client, id: "1", timeoutMs: 60_000), now: t0)
        _ = broker.receive(request("echo", from: other, id: "2", timeoutMs: 60_000), now: t0)
        let lost = sends(broker.tick(now: t0 + broker.config.heartbeatInterval * broker.config.liveness + .milliseconds(1)))
        #expect(Set(lost.filter { replyStatus($0)?.1 == "worker_lost" }.map { $0[0] }) == [client, other])
    }
}
