import Bus
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

@testable import EventCore

/// `handover`: the running instance answers who it is, then stops serving (TestStore).
@MainActor
struct EventsHandoverTests {
    @Test func handover_answersWhoStepsDown_thenStopsServing() async {
        let stops = Locked(0)
        let feature = Events(stopServing: { stops.withLock { $0 += 1 } })
        let store = EventsStore.make(EventsStore.state([EventItem(event: EventsStore.event("gig"))]), feature: feature)
        let info = EventsHandover.Info(instance: "events-host-1-abc", host: "host", pid: 1)
        let id = await store.send(request: { .handoverRequested($0, info) })
        store.expectReply(id, info)
        await store.finish()
        #expect(stops.withLock { $0 } == 1)
    }
}
