import Bus
import Foundation
import ServiceKit
import ServiceKitTesting
import Testing

@testable import WeatherCore

/// Following and unfollowing cities, forecasts (fresh, stale, none) and the refresh timer on
/// the manual clock, with the kit's TestStore.
@MainActor
struct WeatherFollowTests {
    // Followed by id with no search before: the embedded table's cities.
    let zurich: City
    let bern: City

    init() throws {
        let table = try WeatherTestData.table()
        zurich = try #require(table.city(id: WeatherTestData.zurich.id))
        bern = try #require(table.city(id: WeatherTestData.bern.id))
    }

    /// A client whose n-th forecast was fetched n minutes after the fixture time, or that fails
    /// with `failure` once it is set.
    final class Upstream: Sendable {
        let fetches = Locked(0)
        let failure = Locked<WeatherUpstreamError?>(nil)
        /// Holds each fetch until the test opens it, when set.
        let gate: Gate?

        init(gate: Gate? = nil) { self.gate = gate }

        func forecast(_ n: Int, _ city: City) throws -> Forecast {
            try WeatherTestData.forecast(city, fetchedAt: Fixture.fetchedAt.addingTimeInterval(Double(n) * 60))
        }

        var client: WeatherClient {
            WeatherClient(
                provider: .openMeteo, searchCities: { (_, _) throws(WeatherUpstreamError) in [] },
                forecast: { (city) throws(WeatherUpstreamError) in
                    await self.gate?.enter()
                    if let failure = self.failure.withLock({ $0 }) { throw failure }
                    let n = self.fetches.withLock { n in
                        n += 1
                        return n
                    }
                    do {
                        return try self.forecast(n, city)
                    } catch {
                        throw .invalidResponse(.openMeteo, detail: "fixture: \(error)")
                    }
                })
        }
    }

    func store(_ upstream: Upstream?, refresh: Duration = .seconds(1800)) throws -> TestStore<WeatherFeature> {
        TestStore(
            WeatherFeature(client: upstream?.client, table: try WeatherTestData.table(), refreshInterval: refresh),
            initialState: WeatherFeature.State(), stateTopics: WeatherServiceDefinition.stateTopics)
    }

    /// Follows `city` and receives its first forecast (the `n`-th fetch).
    func follow(_ city: City, _ store: TestStore<WeatherFeature>, _ upstream: Upstream, n: Int, before: [City]) async throws {
        let id = await store.send(request: { .followRequested($0, id: city.id) }) {
            $0.followed.append(city)
            $0.forecastsInFlight[city.id] = []
        }
        store.expectPublish("weather.city.followed", WeatherAPI.CityEvent(city: city, following: (before + [city]).map(\.id)))
        store.expectReply(id, FollowingReply(cities: before + [city], units: "metric"))
        let forecast = try upstream.forecast(n, city)
        await store.receive(.forecastResponse(cityID: city.id, .success(forecast))) {
            $0.forecasts[city.id] = forecast
            $0.forecastsInFlight = [:]
        }
        store.expectPublish(
            "weather.forecast.updated", WeatherAPI.ForecastEvent(id: city.id, fetchedAt: forecast.fetchedAt, source: .openMeteo, stale: false))
    }

    @Test func follow_fetchesTheForecastAtOnce_andPublishesTheStateTopics() async throws {
        let upstream = Upstream()
        let store = try store(upstream)
        try await follow(zurich, store, upstream, n: 1, before: [])
        try await follow(bern, store, upstream, n: 2, before: [zurich])
        #expect(
            store.statePublishes.map(\.topic) == [
                "weather.state", "weather.forecast.2657896", "weather.state", "weather.forecast.2661552",
            ])
        let settings = try JSONDecoder().decode(WeatherAPI.Settings.self, from: Data(store.statePublishes[2].payload))
        #expect(settings == WeatherAPI.Settings(followed: [zurich, bern], units: "metric"))

        // Following again changes nothing; `following` lists them in order.
        let again = await store.send(request: { .followRequested($0, id: zurich.id) })
        store.expectReply(again, FollowingReply(cities: [zurich, bern], units: "metric"))
        let list = await store.send(request: { .followingRequested($0) })
        store.expectReply(list, FollowingReply(cities: [zurich, bern], units: "metric"))
        // A followed city's forecast is the stored one, refreshed by the timer.
        let forecast = await store.send(request: { .forecastRequested($0, id: zurich.id) })
        store.expectReply(forecast, try upstream.forecast(1, zurich))
        #expect(upstream.fetches.withLock { $0 } == 2)
        await store.finish()
    }

    @Test func unfollow_removesTheCity_andPublishesItsForecastTopicAsNull() async throws {
        let upstream = Upstream()
        let store = try store(upstream)
        try await follow(zurich, store, upstream, n: 1, before: [])
        let published = store.statePublishes.count
        let id = await store.send(request: { .unfollowRequested($0, id: zurich.id) }) {
            $0.followed = []
            $0.forecasts = [:]
        }
        store.expectPublish("weather.city.unfollowed", WeatherAPI.CityEvent(city: zurich, following: []))
        store.expectReply(id, FollowingReply(cities: [], units: "metric"))
        let after = store.statePublishes.dropFirst(published).map { "\($0.topic) \(String(decoding: $0.payload, as: UTF8.self))" }
        #expect(after == [#"weather.state {"followed":[],"units":"metric"}"#, "weather.forecast.2657896 null"])

        let again = await store.send(request: { .unfollowRequested($0, id: zurich.id) })
        store.expectFailure(again, status: 404, code: "not_found")
        await store.finish()
    }

    @Test(arguments: [0, -1, 999_999_999])
    func followForecastUnfollow_ofAnUnknownID_areRefused400(id: Int) async throws {
        let store = try store(Upstream())
        let follow = await store.send(request: { .followRequested($0, id: id) })
        store.expectFailure(follow, status: 400, code: "bad_request")
        let forecast = await store.send(request: { .forecastRequested($0, id: id) })
        store.expectFailure(forecast, status: 400, code: "bad_request")
        let unfollow = await store.send(request: { .unfollowRequested($0, id: id) })
        store.expectFailure(unfollow, status: 400, code: "bad_request")
        await store.finish()
    }

    @Test func refresh_onTheTimer_fetchesEveryFollowedCityAgain() async throws {
        let upstream = Upstream()
        let store = try store(upstream, refresh: .seconds(600))
        try await follow(zurich, store, upstream, n: 1, before: [])
        await store.advance(by: .seconds(600))
        await store.receive(.refreshTimerFired) {
            $0.forecastsInFlight[zurich.id] = []
        }
        let second = try upstream.forecast(2, zurich)
        await store.receive(.forecastResponse(cityID: zurich.id, .success(second))) {
            $0.forecasts[zurich.id] = second
            $0.forecastsInFlight = [:]
        }
        store.expectPublish(
            "weather.forecast.updated", WeatherAPI.ForecastEvent(id: zurich.id, fetchedAt: second.fetchedAt, source: .openMeteo, stale: false))
        #expect(second.fetchedAt == "2025-01-01T04:22:00Z")

        // The upstream goes down: the next refresh keeps the forecast, marked stale, and a
        // request gets it; `refresh` says which city failed.
        let down = WeatherUpstreamError.unreachable(.openMeteo, detail: "connection refused")
        upstream.failure.withLock { $0 = down }
        await store.advance(by: .seconds(600))
        await store.receive(.refreshTimerFired) {
            $0.forecastsInFlight[zurich.id] = []
        }
        var stale = second
        stale.stale = true
        await store.receive(.forecastResponse(cityID: zurich.id, .failure(down))) {
            $0.forecasts[zurich.id] = stale
            $0.forecastsInFlight = [:]
        }
        let refresh = await store.send(request: { .refreshRequested($0) }) {
            $0.refreshes[2] = .init(pending: [zurich.id], order: [zurich.id])
            $0.forecastsInFlight[zurich.id] = []
        }
        await store.receive(.forecastResponse(cityID: zurich.id, .failure(down))) {
            $0.refreshes = [:]
            $0.forecastsInFlight = [:]
        }
        store.expectReply(
            refresh, RefreshReply(updated: [], failed: [.init(id: zurich.id, code: "upstream_unreachable", message: down.description)]))
        let forecast = await store.send(request: { .forecastRequested($0, id: zurich.id) }) {
            $0.forecastsInFlight[zurich.id] = [3]
        }
        await store.receive(.forecastResponse(cityID: zurich.id, .failure(down))) {
            $0.forecastsInFlight = [:]
        }
        store.expectReply(forecast, stale)
        await store.finish()
    }

    @Test func started_fetchesTheRestoredCitiesAgain_andAForecastAskedMeanwhileWaitsForThatFetch() async throws {
        let gate = Gate()
        let upstream = Upstream(gate: gate)
        var restored = WeatherFeature.State()
        restored.followed = [zurich]
        restored.forecasts[zurich.id] = try upstream.forecast(0, zurich)
        let store = TestStore(
            WeatherFeature(client: upstream.client, table: try WeatherTestData.table()), initialState: restored,
            stateTopics: WeatherServiceDefinition.stateTopics)
        await store.send(.started) {
            $0.forecastsInFlight[zurich.id] = []
        }
        let id = await store.send(request: { .forecastRequested($0, id: zurich.id) }) {
            $0.forecastsInFlight[zurich.id] = [1]
        }
        gate.open()
        let fresh = try upstream.forecast(1, zurich)
        await store.receive(.forecastResponse(cityID: zurich.id, .success(fresh))) {
            $0.forecasts[zurich.id] = fresh
            $0.forecastsInFlight = [:]
        }
        store.expectPublish(
            "weather.forecast.updated", WeatherAPI.ForecastEvent(id: zurich.id, fetchedAt: fresh.fetchedAt, source: .openMeteo, stale: false))
        store.expectReply(id, fresh)
        await store.finish()
    }

    @Test func forecast_ofACityNotFollowed_whenTheUpstreamIsDown_is503_neverInvented() async throws {
        let upstream = Upstream()
        let down = WeatherUpstreamError.unreachable(.openMeteo, detail: "connection refused")
        upstream.failure.withLock { $0 = down }
        let store = try store(upstream)
        let id = await store.send(request: { .forecastRequested($0, id: bern.id) }) {
            $0.forecastsInFlight[bern.id] = [1]
        }
        await store.receive(.forecastResponse(cityID: bern.id, .failure(down))) {
            $0.forecastsInFlight = [:]
        }
        store.expectFailure(id, status: 503, code: "upstream_unreachable")
        await store.finish()
    }

    @Test func forecast_withTheEmbeddedProvider_isTheStoredOneMarkedStale_orNone() async throws {
        let stored = try WeatherTestData.forecast(zurich)
        var state = WeatherFeature.State()
        state.followed = [zurich]
        state.forecasts[zurich.id] = stored
        let store = TestStore(WeatherFeature(client: nil, table: try WeatherTestData.table()), initialState: state)
        var stale = stored
        stale.stale = true
        let id = await store.send(request: { .forecastRequested($0, id: zurich.id) })
        store.expectReply(id, stale)
        let none = await store.send(request: { .forecastRequested($0, id: bern.id) })
        store.expectFailure(none, status: 503, code: "upstream_unreachable")
        await store.finish()
    }
}
