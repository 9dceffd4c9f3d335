import Foundation
import Testing

@testable import WeatherCore

struct OpenWeatherMapKeyFileTests {
    func withKeyFile(_ text: String, mode: Int, _ body: (String) throws -> Void) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("owm-key-\(UUID().uuidString)")
        try Data(text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        try body(url.path)
    }

    @Test func read_aPrivateFile_givesTheKeyOnItsFirstLine() throws {
        try withKeyFile("  abc123  \nignored\n", mode: 0o600) { path in
            let key = try OpenWeatherMapKeyFile.read(path)
            #expect(key.value == "abc123")
        }
    }

    @Test(arguments: [0o644, 0o640, 0o604])
    func read_aFileOthersMayRead_isRefused(mode: Int) throws {
        try withKeyFile("abc123\n", mode: mode) { path in
            let error = #expect(throws: OpenWeatherMapKeyFile.Problem.self) { try OpenWeatherMapKeyFile.read(path) }
            #expect(error?.description.contains("chmod 600") == true)
            #expect(error?.description.contains("abc123") == false)
        }
    }

    @Test func read_anEmptyOrMissingFile_isRefused() throws {
        try withKeyFile("\n", mode: 0o600) { path in
            #expect(throws: OpenWeatherMapKeyFile.Problem.self) { try OpenWeatherMapKeyFile.read(path) }
        }
        #expect(throws: OpenWeatherMapKeyFile.Problem.self) { try OpenWeatherMapKeyFile.read("/nonexistent/owm.key") }
    }
}
