import Foundation
import ServiceKit

/// Everything the auth service touches outside its own memory, as structs of closures with
/// live and test values (the TCA way): swap one in a test, keep the rest.
public struct AuthDependencies: Sendable {
    public var clock: ServiceClock
    public var random: RandomSource
    public var http: HTTPClient
    public var tokenStore: TokenStore
    public var passwordHasher: PasswordHasher

    public init(clock: ServiceClock, random: RandomSource, http: HTTPClient, tokenStore: TokenStore, passwordHasher: PasswordHasher) {
        self.clock = clock
        self.random = random
        self.http = http
        self.tokenStore = tokenStore
        self.passwordHasher = passwordHasher
    }

    /// The real clock, libsodium, URLSession and `<state-dir>/tokens.json`.
    public static func live(stateDirectory: URL, httpTimeout: Duration = .seconds(10)) -> AuthDependencies {
        AuthDependencies(
            clock: .live, random: RandomSource(bytes: Sodium.randomBytes), http: .live(timeout: httpTimeout),
            tokenStore: .file(stateDirectory.appendingPathComponent("tokens.json")), passwordHasher: .live)
    }

    /// A manual clock, predictable random bytes, an HTTP client that fails every request (set
    /// your own), tokens in memory and the fake hasher.
    public static func test(clock: ManualClock = ManualClock(), tokens: TokenBox = TokenBox()) -> AuthDependencies {
        AuthDependencies(
            clock: .manual(clock), random: .test(),
            http: HTTPClient { (request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse in
                throw HTTPTransportError("no HTTP in this test (\(request.method) \(request.url.path))")
            },
            tokenStore: .inMemory(tokens), passwordHasher: .test)
    }
}
