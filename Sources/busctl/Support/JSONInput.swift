import Foundation

/// Parsing JSON a user gave (argument or standard input).
enum JSONInput {
    /// Reads the JSON text from `argument`, or from standard input when it is nil or "-".
    /// - Throws: ``CommandFailure`` (exit 65) when it is not one JSON value.
    static func read(_ argument: String?, what: String) throws -> [UInt8] {
        let bytes: [UInt8]
        let source: String
        if let argument, argument != "-" {
            bytes = Array(argument.utf8)
            source = "the \(what) argument"
        } else {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
            source = "standard input"
        }
        return try validate(bytes, source: source)
    }

    /// Checks that `bytes` are one JSON value and returns them without surrounding whitespace.
    static func validate(_ bytes: [UInt8], source: String) throws -> [UInt8] {
        let trimmed = Array(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard !trimmed.isEmpty else {
            throw CommandFailure("\(source) is empty; expected JSON such as {\"value\":1}", code: ExitCode.dataError)
        }
        do {
            _ = try JSONSerialization.jsonObject(with: Data(trimmed), options: [.fragmentsAllowed])
        } catch {
            let detail = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String).map { ": \($0)" } ?? ""
            throw CommandFailure("\(source) is not valid JSON\(detail)", code: ExitCode.dataError)
        }
        return trimmed
    }

    /// The payload as a JSON value if it is one, else nil.
    static func value(_ payload: [UInt8]) -> Any? {
        guard !payload.isEmpty else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(payload), options: [.fragmentsAllowed])
    }

    /// The payload for a JSON document: under `payload` when it is JSON, else base64 under
    /// `payload_b64`.
    static func embed(_ payload: [UInt8], into object: inout [String: Any]) {
        if let value = value(payload) {
            object["payload"] = value
        } else if !payload.isEmpty {
            object["payload_b64"] = Data(payload).base64EncodedString()
        } else {
            object["payload"] = NSNull()
        }
    }
}
