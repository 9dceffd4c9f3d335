import Bus
import ServiceKit

extension WeatherFeature {
    func follow(into state: inout State, _ id: RequestID, cityID: Int) -> Effect<Action> {
        guard let city = city(cityID, in: state) else { return .fail(id, unknownCity(cityID)) }
        // Following a followed city again changes nothing.
        guard !state.followed.contains(where: { $0.id == cityID }) else { return .reply(id, FollowingReply(state)) }
        guard state.followed.count < Self.maxFollowed else {
            return .fail(id, .conflict("\(state.followed.count) cities are followed, the most there may be; unfollow one first"))
        }
        state.followed.append(city)
        var effects: [Effect<Action>] = [
            .publish("weather.city.followed", WeatherAPI.CityEvent(city: city, following: state.followed.map(\.id))),
            .reply(id, FollowingReply(state)),
        ]
        if let client, state.forecastsInFlight[cityID] == nil {
            state.forecastsInFlight[cityID] = []
            effects.append(fetchForecast(city, with: client))
        }
        return .merge(effects)
    }

    func unfollow(into state: inout State, _ id: RequestID, cityID: Int) -> Effect<Action> {
        guard let index = state.followed.firstIndex(where: { $0.id == cityID }) else {
            guard city(cityID, in: state) != nil else { return .fail(id, unknownCity(cityID)) }
            return .fail(id, .notFound("city \(cityID) is not followed"))
        }
        let city = state.followed.remove(at: index)
        // Its topic is published once more as null (removed); a fetch in flight still answers
        // the requests waiting on it, and its result is not kept.
        state.forecasts[cityID] = nil
        return .merge(
            .publish("weather.city.unfollowed", WeatherAPI.CityEvent(city: city, following: state.followed.map(\.id))),
            .reply(id, FollowingReply(state)))
    }
}
