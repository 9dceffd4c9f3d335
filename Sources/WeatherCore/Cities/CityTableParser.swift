import Foundation

/// Reads the TSV `scripts/make-cities` writes, straight from its bytes.
enum CityTableParser {
    /// The rows in file order: each city and its ASCII name.
    struct Rows {
        var cities: [City] = []
        var asciiNames: [String] = []
    }

    static let columns = ["id", "name", "ascii_name", "country", "admin1_code", "lat", "lon", "population", "timezone"]

    static func parse(_ data: Data) throws(CityTableError) -> Rows {
        let result: Result<Rows, CityTableError> = data.withUnsafeBytes { raw in
            Result { () throws(CityTableError) -> Rows in try parse(raw.bindMemory(to: UInt8.self)) }
        }
        return try result.get()
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(CityTableError) -> Rows {
        var rows = Rows()
        rows.cities.reserveCapacity(bytes.count / 70)
        rows.asciiNames.reserveCapacity(bytes.count / 70)
        var sawHeader = false
        var lineNumber = 0
        var lineStart = 0
        var fields: [Range<Int>] = []
        fields.reserveCapacity(columns.count)
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            lineNumber += 1
            defer { lineStart = lineEnd + 1 }
            var end = lineEnd
            if end > lineStart && bytes[end - 1] == 0x0D { end -= 1 }
            if end == lineStart || bytes[lineStart] == 0x23 { continue }

            fields.removeAll(keepingCapacity: true)
            var fieldStart = lineStart
            for position in lineStart..<end where bytes[position] == 0x09 {
                fields.append(fieldStart..<position)
                fieldStart = position + 1
            }
            fields.append(fieldStart..<end)
            guard fields.count == columns.count else {
                throw .malformed(line: lineNumber, reason: "\(fields.count) columns, expected \(columns.count) (\(columns.joined(separator: ", ")))")
            }
            func text(_ index: Int) -> String {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[fields[index]]), as: UTF8.self)
            }
            if !sawHeader {
                let header = (0..<columns.count).map(text)
                guard header == columns else {
                    throw .malformed(line: lineNumber, reason: "header \(header.joined(separator: ",")), expected \(columns.joined(separator: ","))")
                }
                sawHeader = true
                continue
            }
            guard let id = integer(bytes, fields[0]), let population = integer(bytes, fields[7]) else {
                throw .malformed(line: lineNumber, reason: "id or population is not an integer")
            }
            guard let lat = decimal(bytes, fields[5]), let lon = decimal(bytes, fields[6]), (-90...90).contains(lat), (-180...180).contains(lon)
            else {
                throw .malformed(line: lineNumber, reason: "lat/lon are not coordinates")
            }
            let name = text(1)
            let country = text(3)
            let timezone = text(8)
            guard !name.isEmpty, !country.isEmpty, !timezone.isEmpty else {
                throw .malformed(line: lineNumber, reason: "empty name, country or timezone")
            }
            let admin1 = text(4)
            let ascii = fields[2] == fields[1] ? name : text(2)
            let city = City(
                id: id, name: name, country: country, admin1Code: admin1.isEmpty ? nil : admin1, lat: lat, lon: lon, timezone: timezone,
                population: population)
            rows.cities.append(city)
            rows.asciiNames.append(ascii.isEmpty ? name : ascii)
        }
        guard sawHeader else { throw .malformed(line: lineNumber, reason: "no header line") }
        return rows
    }

    /// Powers of ten exact in a Double.
    private static let powersOfTen: [Double] = (0...15).map { exponent in (0..<exponent).reduce(1.0) { value, _ in value * 10 } }

    /// A decimal `-?digits[.digits]` with at most 15 significant digits, parsed without making a
    /// String. Both the digits and the power of ten are exact Doubles, so the one division
    /// rounds correctly: the result is the same Double as `Double(text)`.
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double? {
        var position = range.lowerBound
        let negative = position < range.upperBound && bytes[position] == 0x2D
        if negative { position += 1 }
        var mantissa = 0
        var digits = 0
        var fractionDigits = 0
        var sawPoint = false
        while position < range.upperBound {
            let byte = bytes[position]
            if byte == 0x2E && !sawPoint {
                sawPoint = true
            } else {
                let digit = byte &- 0x30
                guard digit < 10 else { return nil }
                mantissa = mantissa * 10 + Int(digit)
                digits += 1
                if sawPoint { fractionDigits += 1 }
            }
            position += 1
        }
        guard digits > 0, digits <= 15 else { return nil }
        let value = Double(mantissa) / powersOfTen[fractionDigits]
        return negative ? -value : value
    }

    /// A non-negative decimal integer, parsed without making a String.
    private static func integer(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, range.count < 19 else { return nil }
        var value = 0
        for position in range {
            let digit = bytes[position] &- 0x30
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }
}
