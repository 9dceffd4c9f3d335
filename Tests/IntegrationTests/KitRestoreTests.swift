import Bus
import BusTestSupport
import Foundation
import Testing

@testable import ServiceKit

/// A kit store restoring many state topics while `persist` is down: the kernel's retained
/// values come back, marked as not saved by persist, and the start waits about one restore
/// deadline in all, not one per topic.
@Suite(.serialized)
struct KitRestoreTests {
    @Test func restore_withPersistDown_waitsForPersistOnce_andTakesTheKernelsValues() async throws {
        try await Harness.with { h in
            let writer = h.client(name: "test")
            let topics = (1...5).map { "test.item.\($0)" }
            for (index, topic) in topics.enumerated() { try await writer.publish(topic, index, retain: true) }
            #expect(await eventually { (try? await writer.retained(topics[4])) != nil })

            let bus = h.client(name: "test")
            let ports = StorePorts.bus(bus, restoreDeadline: .seconds(2))
            let clock = ContinuousClock()
            let started = clock.now
            var values: [String] = []
            for topic in topics {
                let bytes = try await ports.restore(topic)
                values.append(String(decoding: bytes ?? [], as: UTF8.self))
            }
            let elapsed = clock.now - started
            #expect(values == ["0", "1", "2", "3", "4"])
            // No persist: the first topic waits its 2 s deadline; asking persist for every
            // topic would take 5 x 2 s.
            #expect(elapsed < .seconds(6), "restoring 5 topics took \(elapsed)")
            let untouched = h.client(name: "test")
            let direct = try #require(try await untouched.restorePayload(topics[0], deadline: .milliseconds(300)))
            #expect(!direct.persistAnswered)
            #expect(direct.source == .kernel)
        }
    }
}
