import Foundation

/// Instants in request payloads: ISO 8601 UTC with whole seconds (`2025-03-01T12:00:00Z`), the
/// form ``Event`` is written in, so a client sends back what it reads.
enum WireInstant {
    static func decode<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> Date? {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        let text = try container.decode(String.self, forKey: key)
        guard let civil = CivilDateTime(isoFormat: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "'\(text)' is not an ISO 8601 UTC instant like 2025-03-01T12:00:00Z")
        }
        return civil.utcInstant
    }

    static func string(_ date: Date) -> String { Event.isoString(date) }
}
