import Bus
import BusTestSupport
import Foundation
import Testing

/// docker-compose.yml as docker-compose 1.29 (Debian's) and the compose specification's JSON
/// schema read it, and the properties the deployment promises: every kernel port on loopback
/// only, `init: true`, a named volume per stateful service, no secret in the file.
struct ComposeFileTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var composeFile: URL { root.appendingPathComponent("docker-compose.yml") }

    /// Runs a program to completion (bounded) and returns its status and output.
    static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = Locked(Data())
        let reader = Thread {
            let bytes = pipe.fileHandleForReading.readDataToEndOfFile()
            data.withLock { $0 = bytes }
        }
        reader.start()
        let exited = await eventually(timeout: timeout, every: .milliseconds(20)) { !process.isRunning }
        if !exited { process.terminate() }
        process.waitUntilExit()
        _ = await eventually(timeout: .seconds(5)) { !data.value.isEmpty || !reader.isExecuting }
        return (process.terminationStatus, String(decoding: data.value, as: UTF8.self))
    }

    /// A copy of docker-compose.yml with `change` applied, in a temporary folder.
    static func variant(_ change: (String) -> String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compose-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("docker-compose.yml")
        try Data(change(try String(contentsOf: composeFile, encoding: .utf8)).utf8).write(to: url)
        return url
    }

    @Test func dockerCompose129_acceptsTheFile_andRefusesABrokenOne() async throws {
        let good = try await Self.run(["docker-compose", "-f", Self.composeFile.path, "config", "-q"])
        #expect(good.status == 0, "\(good.output)")
        let broken = try Self.variant { $0.replacingOccurrences(of: "  depends_on:\n    - keys", with: "  depends_on:\n    - nowhere") }
        defer { try? FileManager.default.removeItem(at: broken.deletingLastPathComponent()) }
        let bad = try await Self.run(["docker-compose", "-f", broken.path, "config", "-q"])
        #expect(bad.status != 0)
        #expect(bad.output.contains("nowhere"))
    }

    @Test func composeSpecificationSchema_acceptsTheFile_andRefusesAnUnknownKey() async throws {
        let good = try await Self.run(["check-jsonschema", "--builtin-schema", "vendor.compose-spec", Self.composeFile.path])
        #expect(good.status == 0, "\(good.output)")
        let broken = try Self.variant {
            $0.replacingOccurrences(of: "    init: true\n    restart: \"no\"", with: "    init: true\n    restart: \"no\"\n    imagez: x")
        }
        defer { try? FileManager.default.removeItem(at: broken.deletingLastPathComponent()) }
        let bad = try await Self.run(["check-jsonschema", "--builtin-schema", "vendor.compose-spec", broken.path])
        #expect(bad.status != 0)
    }

    @Test func everyPortIsOnLoopback_everyContainerHasInit_andStateIsInNamedVolumes() async throws {
        let script = "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"
        let dumped = try await Self.run(["python3", "-c", script, Self.composeFile.path])
        #expect(dumped.status == 0, "\(dumped.output)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(dumped.output.utf8)) as? [String: Any])
        let services = try #require(object["services"] as? [String: [String: Any]])
        #expect(Set(services.keys) == ["keys", "kernel", "persist", "auth", "feed", "weather", "events"])
        for (name, service) in services {
            #expect(service["init"] as? Bool == true, "\(name) has no init")
            #expect(service["image"] as? String == "localhost/swiftbus:latest", "\(name) runs another image")
            for port in service["ports"] as? [String] ?? [] { #expect(port.hasPrefix("127.0.0.1:"), "\(name) publishes \(port) beyond loopback") }
        }
        let ports = (services["kernel"]?["ports"] as? [String]) ?? []
        #expect(ports == ["127.0.0.1:5555:5555", "127.0.0.1:5556:5556", "127.0.0.1:5557:5557"])
        for stateful in ["persist", "auth", "feed", "weather", "events"] {
            let volumes = services[stateful]?["volumes"] as? [String] ?? []
            #expect(volumes.contains("\(stateful)-data:/var/lib/swiftbus/state"), "\(stateful) keeps no state in a named volume")
            // Its own key volume and no other's: a compromised container holds one identity.
            #expect(volumes.filter { $0.hasPrefix("keys-") } == ["keys-\(stateful):/var/lib/swiftbus/keys"])
        }
        #expect((services["kernel"]?["volumes"] as? [String]) == ["keys-kernel:/var/lib/swiftbus/keys"])
        let text = try String(contentsOf: Self.composeFile, encoding: .utf8).lowercased()
        #expect(!text.contains("secret:") && !text.contains("password") && !text.contains("key_secret"))
    }
}
