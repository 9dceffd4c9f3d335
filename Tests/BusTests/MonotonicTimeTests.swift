import Testing

@testable import Bus
@testable import BusKernel
@testable import BusSupport
@testable import BusWire
@testable import BusZMQ

/// The integer clock of the bus's loops: conversions, saturation, and the broker's deadlines
/// at the edges (a caller may ask for any timeout).
struct MonotonicTimeTests {
    @Test func nowMovesForward_andDifferencesAreNanoseconds() {
        let a = MonotonicTime.now
        let b = MonotonicTime.now
        #expect(b >= a)
        let t = MonotonicTime(nanoseconds: 5_000_000_000)
        #expect(t.advanced(by: 1_500_000).nanoseconds(since: t) == 1_500_000)
        #expect(t.advanced(by: 1_999_999).milliseconds(since: t) == 1)
        #expect(t.advanced(by: 2_999).microseconds(since: t) == 2)
        #expect(t.milliseconds(since: t.advanced(by: 3_000_000)) == -3)
        #expect(t + .milliseconds(250) == t.advanced(by: 250_000_000))
        #expect(t - .seconds(1) == MonotonicTime(nanoseconds: 4_000_000_000))
        #expect(t.advanced(by: 1_234) - t == .nanoseconds(1_234))
    }

    @Test func durationsConvert_andClampInsteadOfWrapping() {
        #expect(Duration.seconds(3).nanosecondsClamped == 3_000_000_000)
        #expect(Duration.microseconds(-7).nanosecondsClamped == -7_000)
        #expect(Duration.nanoseconds(1).nanosecondsClamped == 1)
        #expect(Duration.seconds(Int64.max).nanosecondsClamped == .max)
        #expect(Duration.seconds(Int64.min).nanosecondsClamped == .min)
        #expect(Duration.milliseconds(1000).nanosecondsClamped(times: 3) == 3_000_000_000)
        #expect(Duration.milliseconds(1000).nanosecondsClamped(times: 0) == 1_000_000_000)
        #expect(Duration.seconds(Int64.max / 2_000_000_000).nanosecondsClamped(times: 3) == .max)
        #expect(Duration.microseconds(2_999_999).wholeMilliseconds == 2_999)
        let t = MonotonicTime(nanoseconds: 1)
        #expect(t.advanced(by: .max) == MonotonicTime(nanoseconds: .max))
        #expect(MonotonicTime(nanoseconds: -1).advanced(by: .min) == MonotonicTime(nanoseconds: .min))
        #expect(t + .seconds(Int64.max) > t)
    }

    @Test func broker_aHugeCallerTimeout_waitsAtMostMaxWait() {
        var config = Broker.Config()
        config.maxWait = .seconds(2)
        var broker = Broker(config: config)
        let t0 = MonotonicTime.now
        let client: [UInt8] = [0, 0, 0, 1]
        let request: Frames =
            [client, [], MDP.client, Array("ghost".utf8)]
            + RequestBody(method: "m", meta: RequestMeta(id: "r", timeoutMs: Int.max), payload: []).encode()
        _ = broker.receive(request, now: t0)
        _ = broker.tick(now: t0)
        #expect(broker.nextDeadline(now: t0) == t0 + .seconds(1))  // the next heartbeat comes first
        _ = broker.tick(now: t0 + .seconds(1))
        #expect(broker.nextDeadline(now: t0 + .seconds(1)) == t0 + .seconds(2))  // then maxWait, not never
        let answers = broker.tick(now: t0 + .seconds(2)).compactMap { action -> Frames? in
            if let frames = action.frames, frames[0] == client { return frames } else { return nil }
        }
        #expect(answers.count == 1)
    }
}
