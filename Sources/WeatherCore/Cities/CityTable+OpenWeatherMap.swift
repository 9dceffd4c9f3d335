import Foundation

extension CityTable {
    /// How far a geocoder point may lie from the table's city of the same name: city centres
    /// differ between sources by a few kilometres, a different town of the same name is farther.
    public static let matchRadiusKilometres = 30.0

    /// Gives OpenWeatherMap geocoder results GeoNames ids by finding them in this table.
    ///
    /// A place matches the city in the same country whose name or ASCII name folds equal to the
    /// place's name or one of its `local_names`, nearest to the place and within
    /// ``matchRadiusKilometres``. The city is the table's (its id, coordinates, time zone and
    /// population). A place with no such city (a town under 15 000 people, a name the table
    /// spells differently) is left out with the reason: an id is never made up.
    public func match(_ places: [OpenWeatherMapPlace]) -> OpenWeatherMapMatch {
        var cities: [City] = []
        var unmatched: [OpenWeatherMapMatch.Unmatched] = []
        var seen: Set<Int> = []
        for place in places {
            switch nearestNamed(place) {
            case .found(let city):
                if seen.insert(city.id).inserted { cities.append(city) }
            case .none:
                let reason = "no city named '\(place.name)' in \(place.country) with over 15 000 people in the embedded GeoNames table"
                unmatched.append(.init(place: place, reason: reason))
            case .tooFar(let city, let kilometres):
                let reason =
                    "the table's \(city.name), \(city.country) (GeoNames \(city.id)) is \(Int(kilometres.rounded())) km away, "
                    + "over \(Int(Self.matchRadiusKilometres)) km: a different place of the same name"
                unmatched.append(.init(place: place, reason: reason))
            }
        }
        return OpenWeatherMapMatch(cities: cities, unmatched: unmatched)
    }

    private enum Candidate {
        case found(City)
        case none
        case tooFar(City, kilometres: Double)
    }

    private func nearestNamed(_ place: OpenWeatherMapPlace) -> Candidate {
        let names = Set([NameFolding.fold(place.name)] + (place.localNames ?? [:]).values.map(NameFolding.fold)).subtracting([[]])
        let country = place.country.uppercased()
        var best: (index: Int, kilometres: Double)?
        for index in cities.indices where cities[index].country == country {
            guard names.contains(keys[index]) || names.contains(asciiKeys[index]) else { continue }
            let distance = Self.kilometres(place.lat, place.lon, cities[index].lat, cities[index].lon)
            if best.map({ distance < $0.kilometres }) ?? true { best = (index, distance) }
        }
        guard let best else { return .none }
        let city = cities[best.index]
        return best.kilometres <= Self.matchRadiusKilometres ? .found(city) : .tooFar(city, kilometres: best.kilometres)
    }

    /// Great-circle distance (haversine, mean Earth radius).
    static func kilometres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians
        let dLon = (lon2 - lon1) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 6371.0088 * 2 * atan2(sqrt(a), sqrt(1 - a))
    }
}
