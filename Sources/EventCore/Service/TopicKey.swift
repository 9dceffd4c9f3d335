/// Turns an event id or a user name into a bus topic token (`events.item.<key>`,
/// `events.user.<key>`).
///
/// Topic tokens allow only `a-z`, `0-9`, `_` and `-`, and a topic is at most 255 bytes, while
/// event ids are iCalendar UIDs (`party@example.org`, `series@x#20250301T120000Z`) and user
/// names come from the identity provider. The rule:
/// - a text that is already a valid token, at most 64 bytes, and has no `--` is its own key
///   (`alice`, `jazz-night`);
/// - anything else is a readable slug (lowercase ASCII letters, digits and `_`, every other run
///   of characters one `-`; past 40 bytes its first 20 and last 19, so an occurrence keeps its
///   date) then `--` then the 16 hex digits of the FNV-1a 64-bit hash of its UTF-8 bytes
///   (`party-example-org--8f2c0d7b1e9a3c44`).
///
/// Plain keys never contain `--` and slugs never do either, so a plain key never equals a
/// hashed one; two texts share a hashed key only on a 64-bit hash collision, which the
/// service refuses (409) instead of merging two events.
public enum TopicKey {
    /// The key of `text` (see the type's documentation).
    public static func make(_ text: String) -> String {
        let bytes = Array(text.utf8)
        if !bytes.isEmpty, bytes.count <= 64, bytes.allSatisfy(isTokenByte), !text.contains("--") {
            return text
        }
        var slug: [UInt8] = []
        var pendingDash = false
        for byte in text.lowercased().utf8 {
            if isTokenByte(byte) && byte != UInt8(ascii: "-") {
                if pendingDash && !slug.isEmpty { slug.append(UInt8(ascii: "-")) }
                pendingDash = false
                slug.append(byte)
            } else {
                pendingDash = true
            }
        }
        // A long slug keeps its start and its end: an occurrence's id ends in its date.
        if slug.count > 40 { slug = Array(slug.prefix(20)) + [UInt8(ascii: "-")] + Array(slug.suffix(19)) }
        slug = Array(slug.drop { $0 == UInt8(ascii: "-") })
        while slug.last == UInt8(ascii: "-") { slug.removeLast() }
        while let double = slug.indices.dropLast().first(where: { slug[$0] == UInt8(ascii: "-") && slug[$0 + 1] == UInt8(ascii: "-") }) {
            slug.remove(at: double)
        }
        let hash = String(fnv1a64(bytes), radix: 16)
        let padded = String(repeating: "0", count: 16 - hash.count) + hash
        return (slug.isEmpty ? "x" : String(decoding: slug, as: UTF8.self)) + "--" + padded
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F || byte == 0x2D
    }

    static func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
