import Bus
import Foundation
import ServiceKit

extension Events {
    /// Recurring events are expanded from 30 days before an import to a year after it.
    public static func importOptions(now: Date) -> ICalendarImportOptions {
        ICalendarImportOptions(expansionRange: now.addingTimeInterval(-30 * 86_400)..<now.addingTimeInterval(366 * 86_400))
    }

    /// Reads `text` as the service would import it, to refuse a bad `--import` file at start.
    /// - Throws: ``ICalendarError`` with the first malformed line.
    public static func checkCalendar(_ text: String, now: Date) throws(ICalendarError) {
        _ = try ICalendarImporter.importEvents(from: text, options: importOptions(now: now))
    }

    func launch(_ state: inout State, now: Date) -> Effect<Action> {
        state.restoring = []
        guard !state.restored, let calendar = initialCalendar else { return .none }
        guard case .success(let (_, effects)) = Self.upsert(calendar, into: &state, now: now) else { return .none }
        return .merge(effects)
    }

    /// `import`: all or nothing. A malformed document is answered 400 `invalid_calendar` with
    /// its first bad line and changes nothing.
    func importCalendar(_ state: inout State, _ id: RequestID, _ ics: String, now: Date) -> Effect<Action> {
        guard state.user != nil else { return .fail(id, Self.signedOut) }
        switch Self.upsert(ics, into: &state, now: now) {
        case .failure(let error):
            return .fail(id, ServiceError(400, "invalid_calendar", "the calendar cannot be imported: \(error.description)"))
        case .success(let (reply, effects)):
            return .merge(effects + [.reply(id, reply)])
        }
    }

    /// Upserts the events of `ics` by id (UID, and the occurrence's start) and SEQUENCE:
    /// new ids are added, a higher SEQUENCE replaces the event and keeps its people, anything
    /// else is skipped with the reason.
    static func upsert(_ ics: String, into state: inout State, now: Date) -> Result<(EventsReply.Import, [Effect<Action>]), ICalendarError> {
        let result: ICalendarImportResult
        do {
            result = try ICalendarImporter.importEvents(from: ics, options: importOptions(now: now))
        } catch {
            return .failure(error)
        }
        var reply = EventsReply.Import(imported: [], updated: [], skipped: [])
        reply.skipped = result.skipped.map { EventsReply.Skip(line: $0.line, uid: $0.uid, id: nil, reason: $0.reason) }
        var usable: [Event] = []
        for event in result.events {
            let key = TopicKey.make(event.id)
            if let other = state.items[key]?.event.id, other != event.id {
                reply.skipped.append(
                    EventsReply.Skip(line: nil, uid: event.uid, id: event.id, reason: "its topic key '\(key)' is taken by '\(other)'"))
            } else {
                usable.append(event)
            }
        }
        let plan = UpsertPlan.decide(existing: state.items.values.map(\.event), imported: usable)
        var promotions: [(EventItem, String)] = []
        for event in plan.new {
            state.items[TopicKey.make(event.id)] = EventItem(event: event)
            reply.imported.append(event.id)
        }
        for event in plan.updated {
            let key = TopicKey.make(event.id)
            var item = state.items[key]!
            item.event = event
            for user in item.promote(at: now) { promotions.append((item, user)) }
            item.syncCounts()
            state.items[key] = item
            reply.updated.append(event.id)
        }
        reply.skipped += plan.skipped.map { EventsReply.Skip(line: nil, uid: $0.event.uid, id: $0.event.id, reason: $0.reason) }
        var effects: [Effect<Action>] = []
        if !reply.imported.isEmpty { effects.append(.publish("events.created", EventsChange.Changed(ids: reply.imported, cause: "import"))) }
        if !reply.updated.isEmpty { effects.append(.publish("events.updated", EventsChange.Changed(ids: reply.updated, cause: "import"))) }
        for (item, user) in promotions {
            effects.append(
                .publish("events.rsvp.changed", rsvpChange(state.items[TopicKey.make(item.event.id)]!, user: user, status: "going", promoted: [])))
        }
        return .success((reply, effects))
    }
}
