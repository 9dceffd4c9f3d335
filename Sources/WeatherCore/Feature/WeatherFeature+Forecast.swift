import Bus
import ServiceKit

extension WeatherFeature {
    func forecastRequested(into state: inout State, _ id: RequestID, cityID: Int) -> Effect<Action> {
        guard let city = city(cityID, in: state) else { return .fail(id, unknownCity(cityID)) }
        guard let client else {
            // No upstream: the stored forecast, marked stale, or nothing.
            guard var stored = state.forecasts[cityID] else { return .fail(id, Self.noUpstream) }
            stored.stale = true
            return .reply(id, stored)
        }
        // A fetch in flight (a refresh, another caller's request) answers this one too.
        if state.forecastsInFlight[cityID] != nil {
            state.forecastsInFlight[cityID, default: []].append(id.value)
            return .none
        }
        // A followed city's forecast is kept fresh by the refresh timer; a failed refresh
        // marks it stale, and then it is asked for again.
        if let stored = state.forecasts[cityID], !stored.stale {
            return .reply(id, stored)
        }
        state.forecastsInFlight[cityID] = [id.value]
        return fetchForecast(city, with: client)
    }

    func forecastLoaded(into state: inout State, cityID: Int, _ result: Result<Forecast, WeatherUpstreamError>) -> Effect<Action> {
        let waiting = (state.forecastsInFlight.removeValue(forKey: cityID) ?? []).map(RequestID.init)
        let followed = state.followed.contains { $0.id == cityID }
        var effects: [Effect<Action>] = []
        switch result {
        case .success(let forecast):
            if followed {
                state.forecasts[cityID] = forecast
                effects.append(
                    .publish(
                        "weather.forecast.updated",
                        WeatherAPI.ForecastEvent(id: cityID, fetchedAt: forecast.fetchedAt, source: forecast.source, stale: false)))
            }
            effects += waiting.map { .reply($0, forecast) }
        case .failure(let error):
            if error.isTransient, var stored = state.forecasts[cityID] {
                stored.stale = true
                state.forecasts[cityID] = stored
                effects += waiting.map { .reply($0, stored) }
            } else {
                effects += waiting.map { .fail($0, error.serviceError) }
            }
        }
        effects.append(recordRefresh(of: cityID, result, in: &state))
        return .merge(effects)
    }

    /// Fetches every followed city's forecast not already being fetched; `waiter` (a `refresh`
    /// request) is answered when all of them have ended.
    func refresh(into state: inout State, waiter: RequestID?) -> Effect<Action> {
        let ids = state.followed.map(\.id)
        guard let client else {
            let failed = ids.map { RefreshReply.Failure(id: $0, code: Self.noUpstream.code, message: Self.noUpstream.message) }
            return waiter.map { .reply($0, RefreshReply(updated: [], failed: failed)) } ?? .none
        }
        if let waiter {
            guard !ids.isEmpty else { return .reply(waiter, RefreshReply(updated: [], failed: [])) }
            state.refreshes[waiter.value] = RefreshProgress(pending: Set(ids), order: ids)
        }
        var effects: [Effect<Action>] = []
        for city in state.followed where state.forecastsInFlight[city.id] == nil {
            state.forecastsInFlight[city.id] = []
            effects.append(fetchForecast(city, with: client))
        }
        return .merge(effects)
    }

    /// Fetches `city`'s forecast off the store.
    func fetchForecast(_ city: City, with client: WeatherClient) -> Effect<Action> {
        .run(id: EffectID("forecast:\(city.id)"), name: "forecast") { send in
            do throws(WeatherUpstreamError) {
                await send(.forecastResponse(cityID: city.id, .success(try await client.forecast(city))))
            } catch {
                await send(.forecastResponse(cityID: city.id, .failure(error)))
            }
        }
    }

    private func recordRefresh(of cityID: Int, _ result: Result<Forecast, WeatherUpstreamError>, in state: inout State) -> Effect<Action> {
        var effects: [Effect<Action>] = []
        for (request, var progress) in state.refreshes where progress.pending.contains(cityID) {
            progress.pending.remove(cityID)
            if case .failure(let error) = result {
                progress.failed[cityID] = RefreshReply.Failure(id: cityID, code: error.code, message: error.description)
            }
            if progress.pending.isEmpty {
                state.refreshes[request] = nil
                let updated = progress.order.filter { progress.failed[$0] == nil }
                let failed = progress.order.compactMap { progress.failed[$0] }
                effects.append(.reply(RequestID(request), RefreshReply(updated: updated, failed: failed)))
            } else {
                state.refreshes[request] = progress
            }
        }
        return .merge(effects)
    }

    /// The answer to a forecast no upstream can give and none is stored for.
    static let noUpstream = ServiceError(
        503, "upstream_unreachable", "no forecast provider: the service runs on the embedded city table alone (--provider embedded)")

    func unknownCity(_ id: Int) -> ServiceError {
        .badRequest("unknown city id \(id): not in the embedded GeoNames table nor in a recent search result; search for the city first")
    }
}
