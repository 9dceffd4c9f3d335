import Foundation

/// The embedded GeoNames city table (cities over 15 000 people, about 34 000 rows), searched by
/// name and looked up by id without any network.
///
/// The data is GeoNames' (CC BY 4.0): show "GeoNames (geonames.org), CC BY 4.0" where results
/// from it are shown. `scripts/make-cities` regenerates the file.
public struct CityTable: Sendable {
    /// The cities, population descending (then id), so scans meet the largest first.
    let cities: [City]
    /// The folded name of each city.
    let keys: [[UInt8]]
    /// The folded ASCII name of each city (the name without diacritics, from the table).
    let asciiKeys: [[UInt8]]
    private let indexByID: [Int: Int]

    /// The resource name inside WeatherCore's bundle.
    static let resourceName = "cities15000"

    private static let embeddedTable = Result<CityTable, CityTableError> { () throws(CityTableError) -> CityTable in
        guard let url = Bundle.module.url(forResource: resourceName, withExtension: "tsv") else {
            throw .resourceMissing("\(resourceName).tsv")
        }
        return try CityTable(contentsOf: url)
    }

    /// The table shipped in WeatherCore, loaded on first use and kept.
    /// - Throws: ``CityTableError`` when the resource is missing or malformed (a packaging fault).
    public static func embedded() throws(CityTableError) -> CityTable {
        try embeddedTable.get()
    }

    /// Loads a table in the TSV format `scripts/make-cities` writes.
    public init(contentsOf url: URL) throws(CityTableError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .unreadable(path: url.path, reason: error.localizedDescription)
        }
        try self.init(tsv: data)
    }

    /// Parses a table: `#` comment lines, a header line, then one city a line with the columns
    /// id, name, ascii_name, country, admin1_code, lat, lon, population, timezone.
    public init(tsv: Data) throws(CityTableError) {
        let rows = try CityTableParser.parse(tsv)
        var order = Array(rows.cities.indices)
        let populations = rows.cities.map { $0.population ?? 0 }
        let ranksBefore = { (a: Int, b: Int) -> Bool in
            populations[a] != populations[b] ? populations[a] > populations[b] : rows.cities[a].id < rows.cities[b].id
        }
        if !zip(order, order.dropFirst()).allSatisfy({ !ranksBefore($1, $0) }) { order.sort(by: ranksBefore) }

        var cities: [City] = []
        var keys: [[UInt8]] = []
        var asciiKeys: [[UInt8]] = []
        var indexByID: [Int: Int] = [:]
        cities.reserveCapacity(order.count)
        keys.reserveCapacity(order.count)
        asciiKeys.reserveCapacity(order.count)
        indexByID.reserveCapacity(order.count)
        for row in order {
            let city = rows.cities[row]
            let ascii = rows.asciiNames[row]
            let key = NameFolding.fold(city.name)
            if indexByID[city.id] == nil { indexByID[city.id] = cities.count }
            cities.append(city)
            keys.append(key)
            asciiKeys.append(ascii == city.name ? key : NameFolding.fold(ascii))
        }
        self.cities = cities
        self.keys = keys
        self.asciiKeys = asciiKeys
        self.indexByID = indexByID
    }

    /// How many cities the table holds.
    public var count: Int { cities.count }

    /// The city with this GeoNames id, if the table has it.
    public func city(id: Int) -> City? {
        indexByID[id].map { cities[$0] }
    }

    /// Cities whose name starts with `query`, largest first.
    ///
    /// Matching folds case and diacritics (`zur` finds Zürich, `sao paulo` finds São Paulo) and
    /// reads hyphens as spaces. Names that start with the query come first; when they are fewer
    /// than `count`, names with a later word starting with it follow (`york` finds New York).
    /// Each group is ordered by population, descending.
    /// - Parameters:
    ///   - query: The text typed; an empty or blank query matches nothing.
    ///   - count: The most results to return.
    public func search(_ query: String, count: Int) -> [City] {
        let needle = NameFolding.fold(query)
        guard !needle.isEmpty, count > 0 else { return [] }
        var found: [Int] = []
        for index in cities.indices where Self.hasPrefix(keys[index], needle) || Self.hasPrefix(asciiKeys[index], needle) {
            found.append(index)
            if found.count == count { return found.map { cities[$0] } }
        }
        let first = Set(found)
        for index in cities.indices where !first.contains(index) {
            if Self.hasWordPrefix(keys[index], needle) || Self.hasWordPrefix(asciiKeys[index], needle) {
                found.append(index)
                if found.count == count { break }
            }
        }
        return found.map { cities[$0] }
    }

    static func hasPrefix(_ key: [UInt8], _ needle: [UInt8]) -> Bool {
        key.count >= needle.count && key[..<needle.count].elementsEqual(needle)
    }

    /// Whether a word after the first starts with `needle`. A word starts after a byte that is
    /// not an ASCII letter, digit or a UTF-8 continuation (space, `(`, `/`, `'`, `.`).
    static func hasWordPrefix(_ key: [UInt8], _ needle: [UInt8]) -> Bool {
        guard key.count > needle.count else { return false }
        var start = 1
        while start + needle.count <= key.count {
            let previous = key[start - 1]
            let isBoundary = previous < 0x80 && !(previous >= 0x61 && previous <= 0x7A) && !(previous >= 0x30 && previous <= 0x39)
            if isBoundary && key[start..<start + needle.count].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }
}
