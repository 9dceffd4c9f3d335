import Foundation
import Testing

@testable import BusSupport
@testable import BusZMQ

/// The loop the kernel and every client's I/O thread run: what it calls, in what order, and
/// when it does not.
struct PollLoopTests {
    /// The owner every handler is handed: what happened, in order.
    final class Record {
        var calls: [String] = []
    }

    final class Handler: PollHandler {
        let name: String
        let socket: ZMQSocket
        var paused = false
        var wantedTick: MonotonicTime?
        var onReadable: (Record) -> Void = { _ in }
        var onTick: (Record) -> Void = { _ in }

        init(_ name: String, _ socket: ZMQSocket) {
            self.name = name
            self.socket = socket
        }

        func pausesReading(_ owner: Record) -> Bool { paused }

        func readable(_ owner: Record) {
            owner.calls.append("\(name) readable")
            while (try? socket.receive()) ?? nil != nil {}
            onReadable(owner)
        }

        func fired(_ owner: Record) { owner.calls.append("\(name) fired") }

        func tick(_ owner: Record, now: MonotonicTime) -> MonotonicTime? {
            onTick(owner)
            return wantedTick
        }
    }

    /// A PUSH/PULL pair over inproc: the PULL end is the polled socket.
    struct Pipe {
        let push: ZMQSocket
        let pull: ZMQSocket

        init(_ context: ZMQContext) throws {
            let endpoint = "inproc://poll-loop-\(UInt64.random(in: 0...UInt64.max))"
            pull = try ZMQSocket(context, .pull)
            try pull.bind(endpoint)
            push = try ZMQSocket(context, .push)
            try push.connect(endpoint)
        }

        func send() throws { #expect(try push.send([[1]], dontWait: false)) }

        func close() {
            push.close()
            pull.close()
        }
    }

    /// Turns until `condition` holds, for at most two seconds.
    func turn(_ loop: PollLoop<Record>, _ record: Record, until condition: () -> Bool) -> Bool {
        let deadline = MonotonicTime.now + .seconds(2)
        while !condition() && MonotonicTime.now < deadline { _ = loop.turn(record) }
        return condition()
    }

    @Test func readySockets_areHandedToTheirHandlers_inTheOrderAdded() throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let (a, b, c) = (try Pipe(context), try Pipe(context), try Pipe(context))
        defer { [a, b, c].forEach { $0.close() } }
        let loop = PollLoop<Record>(wakeFD: nil, longestWait: .milliseconds(50), logger: Logger(label: "test"))
        let record = Record()
        loop.add(Handler("a", a.pull))
        loop.add(Handler("b", b.pull))
        loop.add(Handler("c", c.pull))
        try c.send()
        try a.send()
        #expect(turn(loop, record) { record.calls.contains("a readable") && record.calls.contains("c readable") })
        let readable = record.calls.filter { $0.hasSuffix("readable") }
        #expect(readable == ["a readable", "c readable"])
    }

    @Test func aPausedHandler_leavesItsMessagesQueued_untilItResumes() throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let pipe = try Pipe(context)
        defer { pipe.close() }
        let loop = PollLoop<Record>(wakeFD: nil, longestWait: .milliseconds(10), logger: Logger(label: "test"))
        let record = Record()
        let handler = Handler("p", pipe.pull)
        handler.paused = true
        loop.add(handler)
        try pipe.send()
        for _ in 0..<20 { _ = loop.turn(record) }
        #expect(!record.calls.contains("p readable"))
        handler.paused = false
        #expect(turn(loop, record) { record.calls.contains("p readable") })
    }

    @Test func theEarliestTick_boundsTheWait() throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let pipe = try Pipe(context)
        defer { pipe.close() }
        // Without the tick, a turn would wait ten minutes.
        let loop = PollLoop<Record>(wakeFD: nil, longestWait: .seconds(600), logger: Logger(label: "test"))
        let handler = Handler("t", pipe.pull)
        handler.wantedTick = .now + .milliseconds(20)
        loop.add(handler)
        let started = MonotonicTime.now
        _ = loop.turn(Record())
        #expect(MonotonicTime.now - started < .seconds(60))
    }

    @Test func workATickQueued_isSeenBeforeThePollWaits() throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let pipe = try Pipe(context)
        defer { pipe.close() }
        // Without the check after the ticks, the turn would wait ten minutes.
        let loop = PollLoop<Record>(wakeFD: nil, longestWait: .seconds(600), logger: Logger(label: "test"))
        let record = Record()
        let handler = Handler("t", pipe.pull)
        handler.onTick = { $0.calls.append("queued") }
        loop.add(handler)
        let started = MonotonicTime.now
        _ = loop.turn(record) { record.calls.contains("queued") }
        #expect(MonotonicTime.now - started < .seconds(60))
    }

    @Test func theWakeUp_isReported_andAHandlerRemovedByAnother_isNotCalled() throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let (a, b) = (try Pipe(context), try Pipe(context))
        defer { [a, b].forEach { $0.close() } }
        let wake = WakeUp()
        defer { wake.close() }
        let loop = PollLoop<Record>(wakeFD: wake.fd, longestWait: .seconds(600), logger: Logger(label: "test"))
        let record = Record()
        let first = Handler("a", a.pull)
        let second = Handler("b", b.pull)
        first.onReadable = { _ in loop.remove(second) }
        loop.add(first)
        loop.add(second)
        wake.signal()
        #expect(loop.turn(record) == true)
        wake.drain()
        // Both ready in one poll: the first removes the second, which is then skipped.
        try b.send()
        try a.send()
        #expect(turn(loop, record) { record.calls.contains("a readable") })
        #expect(!record.calls.contains("b readable"))
        // Removed for good: its messages stay where they are.
        try b.send()
        for _ in 0..<5 { wake.signal(); _ = loop.turn(record); wake.drain() }
        #expect(!record.calls.contains("b readable"))
    }

    @Test func aChangedSet_asksOnlyTheSocketsItDoesNotKnow() throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let (a, b, c) = (try Pipe(context), try Pipe(context), try Pipe(context))
        defer { [a, b, c].forEach { $0.close() } }
        let loop = PollLoop<Record>(wakeFD: nil, longestWait: .milliseconds(10), logger: Logger(label: "test"))
        let record = Record()
        let kept = Handler("a", a.pull)
        let paused = Handler("b", b.pull)
        loop.add(kept)
        loop.add(paused)
        // Each tick notes whether its socket will be asked before the wait.
        var asked: [String: Bool] = [:]
        kept.onTick = { _ in asked["a"] = a.pull.needsEventCheck }
        paused.onTick = { _ in asked["b"] = b.pull.needsEventCheck }
        _ = loop.turn(record)
        _ = loop.turn(record)
        #expect(asked == ["a": false, "b": false])
        // b pauses for a turn; a message reaches it meanwhile.
        paused.paused = true
        _ = loop.turn(record)
        try b.send()
        _ = loop.turn(record)
        // It resumes as a handler is added: the new socket and the one that was not watched
        // are asked, the kept one not.
        paused.paused = false
        let added = Handler("c", c.pull)
        added.onTick = { _ in asked["c"] = c.pull.needsEventCheck }
        loop.add(added)
        _ = loop.turn(record)
        #expect(asked == ["a": false, "b": true, "c": true])
        #expect(turn(loop, record) { record.calls.contains("b readable") })
        // The same socket under a new handler (the kernel's handlers made again): asked.
        loop.remove(kept)
        let again = Handler("a2", a.pull)
        again.onTick = { _ in asked["a"] = a.pull.needsEventCheck }
        loop.add(again)
        _ = loop.turn(record)
        #expect(asked["a"] == true)
    }

    @Test func aReadySocket_whoseHandlerWasSkipped_isReadWhenItIsBack() throws {
        let context = ZMQContext(ioThreads: 0)
        defer { context.terminate() }
        let (a, b, c) = (try Pipe(context), try Pipe(context), try Pipe(context))
        defer { [a, b, c].forEach { $0.close() } }
        let loop = PollLoop<Record>(wakeFD: nil, longestWait: .milliseconds(10), logger: Logger(label: "test"))
        let record = Record()
        let first = Handler("a", a.pull)
        let second = Handler("b", b.pull)
        let third = Handler("c", c.pull)
        // All three ready in one poll: the first takes the second out (it is skipped, its
        // socket found ready and not read) and the third puts it back before the set is built
        // again. Its message must not wait for an edge that will not come.
        first.onReadable = { _ in loop.remove(second) }
        third.onReadable = { _ in loop.add(second) }
        loop.add(first)
        loop.add(second)
        loop.add(third)
        _ = loop.turn(record)
        try b.send()
        try a.send()
        try c.send()
        #expect(turn(loop, record) { record.calls.contains("a readable") && record.calls.contains("c readable") })
        #expect(!record.calls.contains("b readable"))
        #expect(turn(loop, record) { record.calls.contains("b readable") })
    }

    @Test func aTerminatedContext_endsTheLoop() throws {
        let context = ZMQContext(ioThreads: 0)
        let pipe = try Pipe(context)
        let loop = PollLoop<Record>(wakeFD: nil, longestWait: .milliseconds(10), logger: Logger(label: "test"))
        loop.add(Handler("x", pipe.pull))
        try pipe.send()
        // Terminating blocks until every socket is closed: it runs on another thread while
        // this one turns the loop, which must then stop with nil.
        let done = DispatchSemaphore(value: 0)
        _ = Thread.startNamed("test.terminate") {
            context.terminate()
            done.signal()
        }
        var result: Bool?? = .none
        let deadline = MonotonicTime.now + .seconds(5)
        while MonotonicTime.now < deadline {
            result = .some(loop.turn(Record()))
            if result == .some(nil) { break }
        }
        pipe.close()
        done.wait()
        #expect(result == .some(nil))
    }
}
