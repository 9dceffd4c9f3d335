import Foundation
import Testing

@testable import WeatherCore

struct CityTableMatchTests {
    @Test func match_geocoderResults_mapsToGeoNamesIDsOrSaysWhy() throws {
        let table = try CityTable.embedded()
        let places = try OpenWeatherMapDecoder.places(from: Fixture.response("openweathermap-geo"))
        let match = table.match(places)
        #expect(match.cities.map(\.id) == [2_643_743, 6_058_560])
        #expect(match.cities[0].timezone == "Europe/London")
        #expect(match.unmatched.map(\.place.name) == ["City of London", "London", "London"])
        #expect(match.unmatched[1].reason == "no city named 'London' in US with over 15 000 people in the embedded GeoNames table")
    }

    @Test func match_byLocalName_findsTheCity() throws {
        let table = try CityTable.embedded()
        let place = OpenWeatherMapPlace(name: "Zurich", localNames: ["de": "Zürich"], lat: 47.3769, lon: 8.5417, country: "CH", state: "Zurich")
        #expect(table.match([place]).cities.map(\.id) == [2_657_896])
    }

    @Test func match_amongNamesakes_picksTheNearest() throws {
        let table = try CityTable.embedded()
        // The US has several Springfields over 15 000 people; each point must get its own.
        let illinois = OpenWeatherMapPlace(name: "Springfield", lat: 39.7990, lon: -89.6440, country: "US", state: "Illinois")
        let massachusetts = OpenWeatherMapPlace(name: "Springfield", lat: 42.1015, lon: -72.5898, country: "US", state: "Massachusetts")
        let match = table.match([illinois, massachusetts])
        #expect(match.cities.map(\.id) == [4_250_542, 4_951_788])
        #expect(match.unmatched.isEmpty)
    }

    @Test func match_whenOnlyDistantNamesake_reportsDistance() throws {
        let tsv = """
            id\tname\tascii_name\tcountry\tadmin1_code\tlat\tlon\tpopulation\ttimezone
            7\tLondon\tLondon\tCA\t08\t42.98339\t-81.23304\t422324\tAmerica/Toronto

            """
        let table = try CityTable(tsv: Data(tsv.utf8))
        let match = table.match([OpenWeatherMapPlace(name: "London", lat: 45.0, lon: -81.23304, country: "CA")])
        #expect(match.cities.isEmpty)
        #expect(match.unmatched.first?.reason.hasPrefix("the table's London, CA (GeoNames 7) is 224 km away") == true)
    }

    @Test func match_whenTwoResultsHitOneCity_keepsItOnce() throws {
        let table = try CityTable.embedded()
        let a = OpenWeatherMapPlace(name: "Paris", lat: 48.8589, lon: 2.32, country: "FR")
        let b = OpenWeatherMapPlace(name: "Paris", lat: 48.85, lon: 2.35, country: "FR")
        #expect(table.match([a, b]).cities.map(\.id) == [2_988_507])
    }
}
