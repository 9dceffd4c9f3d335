import Bus
import BusTestSupport
import ServiceKit
import ServiceKitTesting
import Testing

@testable import WeatherCore

/// The search reducer (the TCA seed's `search(query:)` / `citiesResponse`) with the kit's
/// TestStore: loading, results, no result, failure, the embedded fallback, shared calls.
@MainActor
struct WeatherSearchTests {
    let zurich = WeatherTestData.zurich

    func store(_ client: WeatherClient?) throws -> TestStore<WeatherFeature> {
        TestStore(
            WeatherFeature(client: client, table: try WeatherTestData.table()), initialState: WeatherFeature.State(),
            stateTopics: WeatherServiceDefinition.stateTopics)
    }

    func loading(_ query: String, count: Int = 10) -> WeatherFeature.SearchState {
        WeatherFeature.SearchState(searchQuery: query, key: .init(query: query, count: count))
    }

    @Test func search_whenTheUpstreamAnswers_isLoadingThenNormal() async throws {
        let gate = Gate()
        let zurich = self.zurich
        let store = try store(WeatherTestData.client(gate: gate, search: { _, _ in [zurich] }))
        let key = WeatherFeature.SearchKey(query: "zur", count: 10)
        let id = await store.send(request: { .search($0, query: " zur ", count: nil, caller: "app") }) {
            $0.searches["app"] = loading("zur")
            $0.searchOrder = ["app"]
            $0.searchesInFlight[key] = [1]
        }
        #expect(store.reply(id) == nil)
        gate.open()
        await store.receive(.citiesResponse(key, .success(.init(cities: [zurich], source: .openMeteo)))) {
            $0.searches["app"]?.status = .normal
            $0.searches["app"]?.list = [zurich]
            $0.searches["app"]?.source = .openMeteo
            $0.searchesInFlight = [:]
            $0.knownCities = [zurich.id: zurich]
            $0.knownOrder = [zurich.id]
        }
        store.expectReply(id, WeatherAPI.SearchReply(status: "normal", cities: [zurich], source: .openMeteo))
        #expect(store.statePublishes.map(\.topic) == [])
        await store.finish()
    }

    @Test func search_whenNothingMatches_isNoResult() async throws {
        let store = try store(WeatherTestData.client())
        let key = WeatherFeature.SearchKey(query: "xq", count: 3)
        let id = await store.send(request: { .search($0, query: "xq", count: 3, caller: "app") }) {
            $0.searches["app"] = loading("xq", count: 3)
            $0.searchOrder = ["app"]
            $0.searchesInFlight[key] = [1]
        }
        await store.receive(.citiesResponse(key, .success(.init(cities: [], source: .openMeteo)))) {
            $0.searches["app"]?.status = .noResult
            $0.searches["app"]?.source = .openMeteo
            $0.searchesInFlight = [:]
        }
        store.expectReply(id, WeatherAPI.SearchReply(status: "no_result", cities: [], source: .openMeteo))
        await store.finish()
    }

    @Test func search_whenTheUpstreamRejectsTheKey_failsWithItsMessage() async throws {
        let rejected = WeatherUpstreamError.upstreamAuth(.openWeatherMap, message: OpenWeatherMapDecoder.rejectedKeyMessage)
        let store = try store(WeatherTestData.client(search: { (_, _) throws(WeatherUpstreamError) in throw rejected }))
        let key = WeatherFeature.SearchKey(query: "zur", count: 10)
        let id = await store.send(request: { .search($0, query: "zur", count: nil, caller: "app") }) {
            $0.searches["app"] = loading("zur")
            $0.searchOrder = ["app"]
            $0.searchesInFlight[key] = [1]
        }
        await store.receive(.citiesResponse(key, .failure(rejected))) {
            $0.searches["app"]?.status = .failed("OpenWeatherMap rejected the API key")
            $0.searches["app"]?.source = .openMeteo
            $0.searchesInFlight = [:]
        }
        store.expectReply(
            id,
            WeatherAPI.SearchReply(
                status: "failed", cities: [], source: .openMeteo, error: "OpenWeatherMap rejected the API key", code: "upstream_auth"))
        await store.finish()
    }

    @Test func search_whenTheUpstreamIsUnreachable_answersFromTheEmbeddedTable() async throws {
        let down = WeatherUpstreamError.unreachable(.openMeteo, detail: "http://127.0.0.1:9/v1/search: connection refused")
        let store = try store(WeatherTestData.client(search: { (_, _) throws(WeatherUpstreamError) in throw down }))
        let embedded = try WeatherTestData.table().search("zur", count: 10)
        #expect(embedded.first?.id == zurich.id)
        let key = WeatherFeature.SearchKey(query: "zur", count: 10)
        let id = await store.send(request: { .search($0, query: "Zur", count: nil, caller: "app") }) {
            $0.searches["app"] = loading("Zur")
            $0.searchOrder = ["app"]
            $0.searchesInFlight[key] = [1]
        }
        await store.receive(.citiesResponse(key, .failure(down)))
        // A scan of the whole table: slow under ThreadSanitizer.
        await store.receive(.citiesResponse(key, .success(.init(cities: embedded, source: .embedded, fallback: down))), timeout: .seconds(20)) {
            $0.searches["app"]?.status = .normal
            $0.searches["app"]?.list = embedded
            $0.searches["app"]?.source = .embedded
            $0.searchesInFlight = [:]
            for city in embedded {
                $0.knownCities[city.id] = city
                $0.knownOrder.append(city.id)
            }
        }
        store.expectReply(
            id, WeatherAPI.SearchReply(status: "normal", cities: embedded, source: .embedded, error: down.description, code: "upstream_unreachable"))
        await store.finish()
    }

    @Test func search_identicalSearchesInFlight_shareOneUpstreamCall() async throws {
        let gate = Gate()
        let zurich = self.zurich
        let store = try store(WeatherTestData.client(gate: gate, search: { _, _ in [zurich] }))
        let key = WeatherFeature.SearchKey(query: "zur", count: 10)
        let first = await store.send(request: { .search($0, query: "zur", count: nil, caller: "a") }) {
            $0.searches["a"] = loading("zur")
            $0.searchOrder = ["a"]
            $0.searchesInFlight[key] = [1]
        }
        let second = await store.send(request: { .search($0, query: "ZUR", count: 10, caller: "b") }) {
            $0.searches["b"] = loading("ZUR")
            $0.searchOrder = ["a", "b"]
            $0.searchesInFlight[key] = [1, 2]
        }
        #expect(await eventually(timeout: .seconds(2)) { @Sendable in gate.calls == 1 })
        gate.open()
        await store.receive(.citiesResponse(key, .success(.init(cities: [zurich], source: .openMeteo)))) {
            for caller in ["a", "b"] {
                $0.searches[caller]?.status = .normal
                $0.searches[caller]?.list = [zurich]
                $0.searches[caller]?.source = .openMeteo
            }
            $0.searchesInFlight = [:]
            $0.knownCities = [zurich.id: zurich]
            $0.knownOrder = [zurich.id]
        }
        let reply = WeatherAPI.SearchReply(status: "normal", cities: [zurich], source: .openMeteo)
        store.expectReply(first, reply)
        store.expectReply(second, reply)
        #expect(gate.calls == 1)
        await store.finish()
    }

    @Test func search_aNewerSearchOfTheSameCaller_doesNotWaitBehindTheOlderOne() async throws {
        let slow = Gate()
        let zurich = self.zurich
        let bern = WeatherTestData.bern
        let client = WeatherClient(
            provider: .openMeteo,
            searchCities: { (query, _) throws(WeatherUpstreamError) in
                if query == "zur" { await slow.enter() }
                return query == "zur" ? [zurich] : [bern]
            },
            forecast: { (_) throws(WeatherUpstreamError) in throw .timeout(.openMeteo) })
        let store = try store(client)
        let old = WeatherFeature.SearchKey(query: "zur", count: 10)
        let new = WeatherFeature.SearchKey(query: "bern", count: 10)
        let first = await store.send(request: { .search($0, query: "zur", count: nil, caller: "app") }) {
            $0.searches["app"] = loading("zur")
            $0.searchOrder = ["app"]
            $0.searchesInFlight[old] = [1]
        }
        let second = await store.send(request: { .search($0, query: "bern", count: nil, caller: "app") }) {
            $0.searches["app"] = loading("bern")
            $0.searchesInFlight[new] = [2]
        }
        // The newer search is answered while the older one still waits on the upstream.
        await store.receive(.citiesResponse(new, .success(.init(cities: [bern], source: .openMeteo)))) {
            $0.searches["app"]?.status = .normal
            $0.searches["app"]?.list = [bern]
            $0.searches["app"]?.source = .openMeteo
            $0.searchesInFlight[new] = nil
            $0.knownCities = [bern.id: bern]
            $0.knownOrder = [bern.id]
        }
        store.expectReply(second, WeatherAPI.SearchReply(status: "normal", cities: [bern], source: .openMeteo))
        #expect(store.reply(first) == nil)
        slow.open()
        // The older one is still answered, and does not overwrite the caller's newer search.
        await store.receive(.citiesResponse(old, .success(.init(cities: [zurich], source: .openMeteo)))) {
            $0.searchesInFlight = [:]
            $0.knownCities[zurich.id] = zurich
            $0.knownOrder = [bern.id, zurich.id]
        }
        store.expectReply(first, WeatherAPI.SearchReply(status: "normal", cities: [zurich], source: .openMeteo))
        await store.finish()
    }

    @Test(arguments: [("", nil), ("   ", nil), ("zur", 0), ("zur", 101), ("zur", -3)] as [(String, Int?)])
    func search_withBadInput_isRefused400_andChangesNothing(query: String, count: Int?) async throws {
        let store = try store(WeatherTestData.client())
        let id = await store.send(request: { .search($0, query: query, count: count, caller: "app") })
        store.expectFailure(id, status: 400, code: "bad_request")
        await store.finish()
    }

    @Test func search_withTheEmbeddedProvider_usesTheTableAlone() async throws {
        let store = try store(nil)
        let embedded = try WeatherTestData.table().search("zür", count: 2)
        let key = WeatherFeature.SearchKey(query: "zür", count: 2)
        let id = await store.send(request: { .search($0, query: "zür", count: 2, caller: "") }) {
            $0.searches[""] = loading("zür", count: 2)
            $0.searchOrder = [""]
            $0.searchesInFlight[key] = [1]
        }
        await store.receive(.citiesResponse(key, .success(.init(cities: embedded, source: .embedded))), timeout: .seconds(20)) {
            $0.searches[""]?.status = .normal
            $0.searches[""]?.list = embedded
            $0.searches[""]?.source = .embedded
            $0.searchesInFlight = [:]
            $0.knownCities = Dictionary(uniqueKeysWithValues: embedded.map { ($0.id, $0) })
            $0.knownOrder = embedded.map(\.id)
        }
        store.expectReply(id, WeatherAPI.SearchReply(status: "normal", cities: embedded, source: .embedded))
        await store.finish()
    }
}
