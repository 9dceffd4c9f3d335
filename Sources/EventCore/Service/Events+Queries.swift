import Bus
import Foundation
import ServiceKit

extension Events {
    func list(_ state: State, _ id: RequestID, _ query: EventListQuery, now: Date) -> Effect<Action> {
        let from = query.from ?? .distantPast
        let to = query.to ?? .distantFuture
        guard from < to else { return .fail(id, .badRequest("'from' must be before 'to'")) }
        let needle = query.query?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        let category = query.category.map(CategorySlug.make)
        var matching: [Event] = []
        var counts: [String: Int] = [:]
        for item in state.items.values {
            let event = item.event
            guard query.includePast || event.endsAt > now else { continue }
            guard event.overlaps(from: from, to: to) else { continue }
            if !needle.isEmpty {
                let texts = [event.title, event.description ?? "", event.location?.name ?? ""]
                guard texts.contains(where: { $0.lowercased().contains(needle) }) else { continue }
            }
            for name in event.categories { counts[name, default: 0] += 1 }
            if let category, !event.categories.contains(category) { continue }
            matching.append(event)
        }
        matching.sort(by: Self.startOrder)
        let categories = counts.keys.sorted().map { EventsReply.CategoryCount(category: $0, count: counts[$0]!) }
        return .reply(id, EventsReply.List(count: matching.count, events: matching, categories: categories))
    }

    func mine(_ state: State, _ id: RequestID) -> Effect<Action> {
        guard let user = state.user else { return .fail(id, Self.signedOut) }
        var liked: [Event] = []
        var going: [Event] = []
        var waitlisted: [Event] = []
        for item in state.items.values {
            if item.likedBy.contains(user) { liked.append(item.event) }
            if item.going.contains(user) { going.append(item.event) }
            if item.waitlist.contains(user) { waitlisted.append(item.event) }
        }
        return .reply(
            id,
            EventsReply.Mine(
                user: user, liked: liked.sorted(by: Self.startOrder), going: going.sorted(by: Self.startOrder),
                waitlisted: waitlisted.sorted(by: Self.startOrder)))
    }

    func export(_ state: State, _ id: RequestID, _ range: ExportRange, now: Date) -> Effect<Action> {
        let from = range.from ?? .distantPast
        let to = range.to ?? .distantFuture
        guard from < to else { return .fail(id, .badRequest("'from' must be before 'to'")) }
        let events = state.items.values.map(\.event).filter { $0.overlaps(from: from, to: to) }.sorted(by: Self.startOrder)
        let ics = ICalendarExporter.export(events, from: from, to: to, stamp: now)
        return .reply(id, EventsReply.Export(count: events.count, ics: ics))
    }
}
