import Bus
import Foundation
import ServiceKit

/// The `events` service: the ``Events`` feature with its methods, state topics, `auth.state`
/// observation and middleware.
public enum EventsService {
    /// The payload `{"id"}`.
    public struct EventRef: Decodable, Sendable {
        public var id: String
    }

    /// The payload of `rsvp`: `{"id", "going": true|false}`.
    public struct RSVPInput: Decodable, Sendable {
        public var id: String
        public var going: Bool
    }

    /// The payload of `import`: `{"ics": "BEGIN:VCALENDAR..."}`.
    public struct ImportInput: Decodable, Sendable {
        public var ics: String
    }

    /// The service definition.
    /// - Parameters:
    ///   - feature: the feature (with the calendar of `--import`, if any).
    ///   - clock: the time requests carry into the reducer.
    ///   - ids: the ids of created events (`<id>@events.swiftbus`).
    ///   - instance: this process's bus instance, for the `handover` answer.
    ///   - logger: for the logging middleware.
    public static func definition(
        feature: Events, clock: ServiceClock = .live, ids: IDGenerator = .live, instance: String, logger: Logger
    ) -> ServiceDefinition<Events> {
        var service = ServiceDefinition(name: "events", feature: feature, initialState: Events.State())
        service.clock = clock
        service.startAction = .launched(now: clock.now())
        for topic in Events.stateTopics { service.state(topic) }
        service.observe("auth.state", as: AuthStateView.self) { .authChanged(user: $0.value.signedInUser) }
        service.method("list") { (id, query: EventListQuery) in .listRequested(id, query, now: clock.now()) }
        service.method("get") { (id, input: EventRef) in .getRequested(id, id: input.id) }
        service.method("create") { (id, draft: EventDraft) in .createRequested(id, draft, id: ids.next() + "@events.swiftbus") }
        service.method("update") { (id, patch: EventPatch) in .updateRequested(id, patch, now: clock.now()) }
        service.method("cancel") { (id, input: EventRef) in .cancelRequested(id, id: input.id) }
        service.method("like") { (id, input: EventRef) in .likeRequested(id, id: input.id, like: true) }
        service.method("unlike") { (id, input: EventRef) in .likeRequested(id, id: input.id, like: false) }
        service.method("rsvp") { (id, input: RSVPInput) in .rsvpRequested(id, id: input.id, going: input.going, now: clock.now()) }
        service.method("mine") { (id, _: Empty) in .mineRequested(id) }
        service.method("import") { (id, input: ImportInput) in .importRequested(id, ics: input.ics, now: clock.now()) }
        service.method("export") { (id, range: ExportRange) in .exportRequested(id, range, now: clock.now()) }
        // With security off the caller is what the client says, so this only guards against a
        // mistaken call; with security on, the built-in policy lets only `events` call it.
        service.method(
            "handover",
            withRequest: { (id, _: Empty, request) in
                guard request.meta.caller == "events" else {
                    return .refused(id, ServiceError(403, "forbidden", "only a starting events instance may call handover"))
                }
                return .handoverRequested(id, EventsHandover.Info.current(instance: instance))
            })
        service.use(Events.logging(logger))
        service.use(Events.invariant)
        service.use(Events.closedEvents)
        service.use(Events.sizeLimit)
        return service
    }
}
