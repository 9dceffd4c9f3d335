import Foundation

/// Folds names for search: case- and diacritic-insensitive (`Zürich` and `zurich` fold alike,
/// `ß` to `ss`, `ø` to `o`), hyphens and runs of spaces to one space, as UTF-8 bytes.
///
/// Table names and queries fold with this one function, so they always agree. Most names are
/// ASCII and take a byte loop; the rest go through Foundation's folding.
enum NameFolding {
    /// Letters that have no canonical decomposition, spelled as ASCII.
    private static let spelledOut: [Unicode.Scalar: String] = [
        "ß": "ss", "ẞ": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ø": "o", "Ø": "o", "ł": "l", "Ł": "l",
        "đ": "d", "Đ": "d", "ð": "d", "Ð": "d", "þ": "th", "Þ": "th", "ı": "i", "ħ": "h", "Ħ": "h", "ŧ": "t", "Ŧ": "t",
        "ŋ": "ng", "Ŋ": "ng", "‘": "'", "’": "'", "ʻ": "'", "ʼ": "'", "`": "'",
    ]

    static func fold(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            append(text.utf8, to: &bytes)
        } else {
            var spelled = text
            if text.unicodeScalars.contains(where: { spelledOut[$0] != nil }) {
                spelled = ""
                for scalar in text.unicodeScalars {
                    if let replacement = spelledOut[scalar] { spelled += replacement } else { spelled.unicodeScalars.append(scalar) }
                }
            }
            let folded = spelled.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            append(folded.utf8, to: &bytes)
        }
        if bytes.last == 0x20 { bytes.removeLast() }
        return bytes
    }

    /// Lowercases ASCII letters, turns hyphens and whitespace into single spaces, drops leading ones.
    private static func append(_ source: some Sequence<UInt8>, to bytes: inout [UInt8]) {
        for byte in source {
            switch byte {
            case 0x41...0x5A:
                bytes.append(byte | 0x20)
            case 0x20, 0x09, 0x0A, 0x0D, 0x2D:
                if let last = bytes.last, last != 0x20 { bytes.append(0x20) }
            default:
                bytes.append(byte)
            }
        }
    }
}
