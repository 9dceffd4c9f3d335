import Bus
import Foundation
import ServiceKit

extension WeatherFeature {
    func search(into state: inout State, _ id: RequestID, query: String, count: Int?, caller: String) -> Effect<Action> {
        let text = query.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return .fail(id, .badRequest("the query is empty: give part of a city name, e.g. {\"query\": \"zur\"}")) }
        guard text.count <= Self.maxQueryLength else {
            return .fail(id, .badRequest("the query is \(text.count) characters long; at most \(Self.maxQueryLength)"))
        }
        let count = count ?? Self.defaultSearchCount
        guard (1...Self.maxSearchCount).contains(count) else {
            return .fail(id, .badRequest("count must be between 1 and \(Self.maxSearchCount), got \(count)"))
        }
        let key = SearchKey(query: text, count: count)
        remember(search: SearchState(searchQuery: text, key: key), of: caller, in: &state)

        // An identical search in flight answers this request too: one upstream call.
        if state.searchesInFlight[key] != nil {
            state.searchesInFlight[key, default: []].append(id.value)
            return .none
        }
        state.searchesInFlight[key] = [id.value]
        guard let client else { return embeddedSearch(key, text: text, fallback: nil) }
        return .run(id: EffectID("search:\(key)"), name: "search") { send in
            do throws(WeatherUpstreamError) {
                let cities = try await client.searchCities(text, count)
                await send(.citiesResponse(key, .success(CitySearchResult(cities: cities, source: CitySource(client.provider)))))
            } catch {
                await send(.citiesResponse(key, .failure(error)))
            }
        }
    }

    func citiesLoaded(into state: inout State, _ key: SearchKey, _ result: Result<CitySearchResult, WeatherUpstreamError>) -> Effect<Action> {
        let status: SearchStatus
        let reply: WeatherAPI.SearchReply
        switch result {
        case .failure(let error) where error.isTransient:
            // The upstream may be back later; the embedded table answers now.
            return embeddedSearch(key, text: key.query, fallback: error)
        case .failure(let error):
            status = .failed(error.description)
            reply = WeatherAPI.SearchReply(status: "failed", cities: [], source: source, error: error.description, code: error.code)
        case .success(let found):
            status = found.cities.isEmpty ? .noResult : .normal
            reply = WeatherAPI.SearchReply(
                status: found.cities.isEmpty ? "no_result" : "normal", cities: found.cities, source: found.source,
                error: found.fallback?.description, code: found.fallback?.code)
            for city in found.cities { remember(city: city, in: &state) }
        }
        for (caller, search) in state.searches where search.key == key && search.status == .loading {
            state.searches[caller]?.status = status
            state.searches[caller]?.list = reply.cities
            state.searches[caller]?.source = reply.source
        }
        let waiting = state.searchesInFlight.removeValue(forKey: key) ?? []
        return .merge(waiting.map { .reply(RequestID($0), reply) })
    }

    /// The embedded table's answer to a search, off the store (a scan of the whole table).
    private func embeddedSearch(_ key: SearchKey, text: String, fallback: WeatherUpstreamError?) -> Effect<Action> {
        let table = self.table
        return .run(id: EffectID("search:\(key)"), name: "search-embedded") { send in
            let cities = table.search(text, count: key.count)
            await send(.citiesResponse(key, .success(CitySearchResult(cities: cities, source: .embedded, fallback: fallback))))
        }
    }

    private func remember(search: SearchState, of caller: String, in state: inout State) {
        state.searches[caller] = search
        state.searchOrder.removeAll { $0 == caller }
        state.searchOrder.append(caller)
        while state.searchOrder.count > Self.maxSearchers {
            state.searches[state.searchOrder.removeFirst()] = nil
        }
    }

    func remember(city: City, in state: inout State) {
        if state.knownCities.updateValue(city, forKey: city.id) == nil { state.knownOrder.append(city.id) }
        while state.knownOrder.count > Self.maxKnownCities {
            state.knownCities[state.knownOrder.removeFirst()] = nil
        }
    }
}
