import Foundation
import Testing

@testable import WeatherCore

struct CityTableTests {
    let table: CityTable

    init() throws {
        table = try CityTable.embedded()
    }

    @Test func embedded_loadsAllCitiesOverFifteenThousand() {
        #expect(table.count > 33_000)
        #expect(table.cities.allSatisfy { ($0.population ?? 0) > 15_000 })
    }

    @Test func embedded_isLoadedOnce() throws {
        let again = try CityTable.embedded()
        #expect(again.cities.withUnsafeBufferPointer { $0.baseAddress } == table.cities.withUnsafeBufferPointer { $0.baseAddress })
    }

    @Test func city_byGeoNamesID_returnsTheRow() {
        #expect(
            table.city(id: 2_657_896)
                == City(
                    id: 2_657_896, name: "Zürich", country: "CH", admin1Code: "ZH", lat: 47.36667, lon: 8.55, timezone: "Europe/Zurich",
                    population: 415_367))
        #expect(table.city(id: 1_796_236)?.name == "Shanghai")
        #expect(table.city(id: -1) == nil)
    }

    @Test func search_withoutDiacritic_findsZurichFirst() throws {
        let results = table.search("zur", count: 10)
        #expect(results.first?.id == 2_657_896)
        let folded = results.map { $0.name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) }
        #expect(folded.allSatisfy { $0.hasPrefix("zur") })
        let populations = results.map { $0.population ?? 0 }
        #expect(populations == populations.sorted(by: >))
    }

    @Test func search_withCaseAndSpaces_findsSaoPaulo() {
        #expect(table.search("sao paulo", count: 3).first?.id == 3_448_439)
        #expect(table.search("SÃO PAULO", count: 3).first?.id == 3_448_439)
        #expect(table.search("  São   Paulo ", count: 1).map(\.name) == ["São Paulo"])
    }

    @Test func search_byAsciiSpelling_findsSpelledOutLetters() {
        // GeoNames writes Kraków, Malmö; the ASCII spellings and ß → ss must find them.
        #expect(table.search("krakow", count: 1).first?.name == "Kraków")
        #expect(table.search("malmo", count: 1).first?.name == "Malmö")
        #expect(table.search("Hyderābād", count: 1).first?.country == "IN")
    }

    @Test func search_prefersPrefixMatchesThenLaterWords() throws {
        let results = table.search("york", count: 50)
        let firstLaterWord = results.firstIndex { !$0.name.lowercased().hasPrefix("york") }
        let lastPrefix = results.lastIndex { $0.name.lowercased().hasPrefix("york") }
        #expect(results.contains { $0.name == "New York City" })
        #expect(try #require(lastPrefix) < (firstLaterWord ?? results.endIndex))
    }

    @Test func search_readsHyphensAsSpaces() {
        #expect(table.search("saint etienne", count: 1).first?.name == "Saint-Étienne")
    }

    @Test func search_respectsCount() {
        #expect(table.search("san", count: 7).count == 7)
        #expect(table.search("san", count: 0).isEmpty)
    }

    @Test(arguments: ["", "   ", "-", "\u{0301}"])
    func search_whenQueryBlank_returnsEmpty(query: String) {
        #expect(table.search(query, count: 10).isEmpty)
    }

    @Test func search_whenNothingMatches_returnsEmpty() {
        #expect(table.search("qqqxxz", count: 10).isEmpty)
    }

    // MARK: parsing

    @Test func init_withUnsortedRows_ordersByPopulation() throws {
        let tsv = """
            # test
            id\tname\tascii_name\tcountry\tadmin1_code\tlat\tlon\tpopulation\ttimezone
            1\tSmallville\tSmallville\tUS\t\t1.5\t2.5\t20000\tAmerica/Chicago
            2\tSmall City\tSmall City\tUS\tKS\t-1.5\t-2.5\t90000\tAmerica/Chicago

            """
        let table = try CityTable(tsv: Data(tsv.utf8))
        #expect(table.search("small", count: 5).map(\.id) == [2, 1])
        #expect(table.city(id: 1)?.admin1Code == nil)
        #expect(table.city(id: 2)?.lat == -1.5)
    }

    @Test func init_whenColumnMissing_throwsMalformedWithLine() {
        let tsv = "id\tname\tascii_name\tcountry\tadmin1_code\tlat\tlon\tpopulation\ttimezone\n1\tX\tX\tUS\t\t1\t2\t20000\n"
        #expect(
            throws: CityTableError.malformed(
                line: 2, reason: "8 columns, expected 9 (id, name, ascii_name, country, admin1_code, lat, lon, population, timezone)")
        ) {
            try CityTable(tsv: Data(tsv.utf8))
        }
    }

    @Test func init_whenHeaderWrong_throwsMalformed() {
        #expect(throws: CityTableError.self) {
            try CityTable(tsv: Data("a\tb\tc\td\te\tf\tg\th\ti\n".utf8))
        }
    }

    @Test func init_whenPopulationNotANumber_throwsMalformed() {
        let tsv = "id\tname\tascii_name\tcountry\tadmin1_code\tlat\tlon\tpopulation\ttimezone\n1\tX\tX\tUS\t\t1\t2\tmany\tUTC\n"
        #expect(throws: CityTableError.malformed(line: 2, reason: "id or population is not an integer")) {
            try CityTable(tsv: Data(tsv.utf8))
        }
    }
}
