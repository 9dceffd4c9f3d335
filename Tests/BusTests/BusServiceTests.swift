import Foundation
import Testing

@testable import Bus
@testable import BusSupport
@testable import BusWire

/// `BusService`'s two kinds of handler: which overload a closure picks, and what runs at once
/// on the I/O thread (``BusService/runNow(_:instance:logger:)``) and what needs a task.
struct BusServiceTests {
    struct Hello: Codable, Sendable { var name: String }
    struct Greeting: Codable, Sendable, Equatable { var text: String }

    let logger = Logger(label: "test", level: .error)

    func prepare(_ service: BusService, _ method: String, _ payload: String = "") -> BusService.Prepared {
        let body = RequestBody(method: method, meta: RequestMeta(id: "7"), payload: Array(payload.utf8)).encode(oneFrame: true)
        return service.prepare(body, from: 0, received: .now, instance: "svc-1")
    }

    func service() -> BusService {
        let service = BusService(name: "svc", execution: .ioThread)
        service.method("echo", raw: { $0.payload })
        service.method(
            "later",
            raw: { request in
                await Task.yield()
                return request.payload
            })
        service.method("hello") { (input: Hello) in Greeting(text: "hello \(input.name)") }
        service.method("helloLater") { (input: Hello) in
            await Task.yield()
            return Greeting(text: "later \(input.name)")
        }
        service.method("conflict", raw: { _ in throw ServiceError.conflict("taken") })
        return service
    }

    @Test func closuresWithoutAwait_registerSyncHandlers_andTheOthersAsync() {
        let service = service()
        func kind(_ method: String) -> String? {
            guard case .run(let entry, _) = prepare(service, method, #"{"name":"x"}"#) else { return nil }
            if case .sync = entry { return "sync" }
            return "async"
        }
        #expect(kind("echo") == "sync")
        #expect(kind("hello") == "sync")
        #expect(kind("conflict") == "sync")
        #expect(kind("later") == "async")
        #expect(kind("helloLater") == "async")
    }

    @Test func runNow_answersSyncHandlers_andLeavesAsyncOnesForATask() throws {
        let service = service()
        let echo = try #require(service.runNow(prepare(service, "echo", "abc"), instance: "svc-1", logger: logger))
        #expect(echo.status == 200)
        #expect(echo.payload == Array("abc".utf8))
        #expect(echo.meta.id == "7")
        #expect(echo.meta.from == "svc-1")
        #expect(echo.meta.elapsedMicros != nil)

        let hello = try #require(service.runNow(prepare(service, "hello", #"{"name":"ada"}"#), instance: "svc-1", logger: logger))
        #expect(try JSONDecoder().decode(Greeting.self, from: Data(hello.payload)) == Greeting(text: "hello ada"))

        #expect(service.runNow(prepare(service, "later", "abc"), instance: "svc-1", logger: logger) == nil)
        #expect(service.runNow(prepare(service, "helloLater", #"{"name":"ada"}"#), instance: "svc-1", logger: logger) == nil)
    }

    @Test func runNow_mapsErrors_likeTheAsyncPath() async throws {
        let service = service()
        for (method, payload, status, code) in [
            ("conflict", "", 409, "conflict"),
            ("hello", "not json", 400, "invalid_json"),
            ("hello", #"{"nom":"x"}"#, 400, "invalid_request"),
            ("nope", "", 404, "no_such_method"),
        ] {
            let now = try #require(service.runNow(prepare(service, method, payload), instance: "svc-1", logger: logger))
            let later = await service.run(prepare(service, method, payload), instance: "svc-1", logger: logger)
            #expect(now.status == status, "\(method)")
            #expect(now.errorBody.code == code, "\(method)")
            #expect(later.status == status, "\(method)")
            #expect(later.errorBody.code == code, "\(method)")
        }
        // A body that is not a request body ends before any handler: answered at once too.
        let malformed = service.prepare([[OneFrameBody.marker, 9]], from: 0, received: .now, instance: "svc-1")
        #expect(service.runNow(malformed, instance: "svc-1", logger: logger)?.errorBody.code == "malformed")
    }

    @Test func run_answersBothKinds() async {
        let service = service()
        #expect(await service.run(prepare(service, "echo", "x"), instance: "svc-1", logger: logger).payload == Array("x".utf8))
        #expect(await service.run(prepare(service, "later", "y"), instance: "svc-1", logger: logger).payload == Array("y".utf8))
    }
}
