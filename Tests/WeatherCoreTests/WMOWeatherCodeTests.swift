import Testing

@testable import WeatherCore

struct WMOWeatherCodeTests {
    @Test(arguments: [
        (0, "Clear sky"), (1, "Mainly clear"), (2, "Partly cloudy"), (3, "Overcast"), (45, "Fog"), (48, "Depositing rime fog"),
        (55, "Dense drizzle"), (56, "Light freezing drizzle"), (63, "Moderate rain"), (67, "Heavy freezing rain"), (75, "Heavy snowfall"),
        (77, "Snow grains"), (82, "Violent rain showers"), (86, "Heavy snow showers"), (95, "Thunderstorm"), (99, "Thunderstorm with heavy hail"),
    ])
    func text_forDocumentedCode_readsAsOpenMeteoDocuments(code: Int, text: String) {
        #expect(WMOWeatherCode.text(for: code) == text)
        #expect(WMOWeatherCode.isKnown(code))
    }

    @Test func text_forUndocumentedCode_saysUnknown() {
        #expect(WMOWeatherCode.text(for: 42) == "Unknown weather code 42")
        #expect(!WMOWeatherCode.isKnown(42))
    }

    @Test func table_coversEveryDocumentedCode() {
        let documented = [0, 1, 2, 3, 45, 48, 51, 53, 55, 56, 57, 61, 63, 65, 66, 67, 71, 73, 75, 77, 80, 81, 82, 85, 86, 95, 96, 99]
        #expect(documented.allSatisfy(WMOWeatherCode.isKnown))
        #expect((0...99).filter(WMOWeatherCode.isKnown) == documented)
    }
}
