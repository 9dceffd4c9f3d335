import Bus
import Foundation
import ServiceKit

/// The `events` service as a kit feature: local events by category, with likes, going lists
/// and waitlists (the Cheers90s seed's `EventsState` and its `bookmarkEvent` reducer).
///
/// The acting user is the one `auth.state` says is signed in (``Action/authChanged(user:)``),
/// never a field of a payload. Time comes in the actions (`now`), so the reducer stays pure.
public struct Events: Feature {
    /// The calendar imported at the first start (`--import`): only when restore found no saved
    /// index, so a restart never imports it again over the events' changes.
    public var initialCalendar: String?
    /// Ends this instance's serving after it handed over to a new one (``EventsHandover``):
    /// live, SIGTERM to its own process, so it drains as on any SIGTERM.
    public var stopServing: @Sendable () -> Void

    /// Creates the feature.
    public init(initialCalendar: String? = nil, stopServing: @escaping @Sendable () -> Void = EventsHandover.stopThisProcess) {
        self.initialCalendar = initialCalendar
        self.stopServing = stopServing
    }

    /// Everything the service knows.
    public struct State: Codable, Equatable, Sendable {
        /// Every event with its people, by topic key (``TopicKey``).
        public var items: [String: EventItem] = [:]
        /// Who `auth.state` says is signed in; nil when nobody is. Not saved: `auth` is its truth.
        public var user: String?
        /// Whether a saved index was restored (the state is not new).
        public var restored = false
        /// The keys the restored index listed, until the start: the item topics to restore.
        public var restoring: [String] = []

        /// An empty state.
        public init() {}
    }

    /// What happens to the service; requests carry their id, and those that depend on the
    /// time carry it.
    public enum Action: Sendable, Equatable {
        /// The start, after restore: imports ``Events/initialCalendar`` into a new state.
        case launched(now: Date)
        /// `auth.state` changed: the signed-in user, or nil.
        case authChanged(user: String?)
        case listRequested(RequestID, EventListQuery, now: Date)
        case getRequested(RequestID, id: String)
        case createRequested(RequestID, EventDraft, id: String)
        case updateRequested(RequestID, EventPatch, now: Date)
        case cancelRequested(RequestID, id: String)
        /// `like` (true) and `unlike` (false).
        case likeRequested(RequestID, id: String, like: Bool)
        case rsvpRequested(RequestID, id: String, going: Bool, now: Date)
        case mineRequested(RequestID)
        case importRequested(RequestID, ics: String, now: Date)
        case exportRequested(RequestID, ExportRange, now: Date)
        /// A new instance takes over (`handover`): answer who this is, then stop serving.
        case handoverRequested(RequestID, EventsHandover.Info)
        /// A request refused before it reached the state (answered with the error).
        case refused(RequestID, ServiceError)
    }

    public func reduce(into state: inout State, _ action: Action) -> Effect<Action> {
        switch action {
        case .launched(let now):
            return launch(&state, now: now)
        case .authChanged(let user):
            state.user = user
            return .none
        case .listRequested(let id, let query, let now):
            return list(state, id, query, now: now)
        case .getRequested(let id, let eventID):
            guard let key = Self.key(of: eventID, in: state) else { return .fail(id, Self.notFound(eventID)) }
            return .reply(id, state.items[key]!.event)
        case .createRequested(let id, let draft, let eventID):
            return create(&state, id, draft, eventID: eventID)
        case .updateRequested(let id, let patch, let now):
            return update(&state, id, patch, now: now)
        case .cancelRequested(let id, let eventID):
            return cancel(&state, id, eventID)
        case .likeRequested(let id, let eventID, let like):
            return self.like(&state, id, eventID, like: like)
        case .rsvpRequested(let id, let eventID, let going, let now):
            return rsvp(&state, id, eventID, going: going, now: now)
        case .mineRequested(let id):
            return mine(state, id)
        case .importRequested(let id, let ics, let now):
            return importCalendar(&state, id, ics, now: now)
        case .exportRequested(let id, let range, let now):
            return export(state, id, range, now: now)
        case .handoverRequested(let id, let info):
            let stop = stopServing
            return .merge(.reply(id, info), .run(name: "handover") { _ in stop() })
        case .refused(let id, let error):
            return .fail(id, error)
        }
    }

    // MARK: shared

    /// The key of the stored event `id`, if there is one.
    static func key(of id: String, in state: State) -> String? {
        let key = TopicKey.make(id)
        return state.items[key]?.event.id == id ? key : nil
    }

    /// Events in time order: start, then id.
    static func startOrder(_ a: Event, _ b: Event) -> Bool {
        a.startsAt != b.startsAt ? a.startsAt < b.startsAt : a.id < b.id
    }

    static func notFound(_ id: String) -> ServiceError { ServiceError(404, "not_found", "no event '\(id)'") }

    static let signedOut = ServiceError(403, "signed_out", "nobody is signed in: sign in with the auth service first")

    /// The time an action carries, for the middleware's check that nobody joins a closed event.
    static func time(of action: Action) -> Date? {
        switch action {
        case .launched(let now), .listRequested(_, _, let now), .updateRequested(_, _, let now), .rsvpRequested(_, _, _, let now),
            .importRequested(_, _, let now), .exportRequested(_, _, let now):
            return now
        case .authChanged, .getRequested, .createRequested, .cancelRequested, .likeRequested, .mineRequested, .handoverRequested,
            .refused:
            return nil
        }
    }
}
