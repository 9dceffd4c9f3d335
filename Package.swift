// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "swiftbus",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Bus", targets: ["Bus"]),
        .executable(name: "busctl", targets: ["busctl"]),
        .executable(name: "AuthService", targets: ["AuthService"]),
        .executable(name: "PersistService", targets: ["PersistService"]),
        .library(name: "ServiceKit", targets: ["ServiceKit"]),
        .library(name: "ServiceKitTesting", targets: ["ServiceKitTesting"]),
        .executable(name: "CounterService", targets: ["CounterService"]),
        .executable(name: "EventService", targets: ["EventService"]),
        .executable(name: "FeedService", targets: ["FeedService"]),
        .executable(name: "WeatherService", targets: ["WeatherService"]),
        .executable(name: "BusChaos", targets: ["BusChaos"]),
    ],
    targets: [
        // libzmq from Debian's libzmq3-dev. A module map with `link "zmq"` and no pkgConfig:
        // pkg-config's `-isystem` flag is refused by SwiftPM on Debian 12 (see shared notes).
        .systemLibrary(name: "CZeroMQ", path: "Sources/CZeroMQ"),
        // The layers of the bus, each a target with `package` access between them (README, Layers):
        // helpers every layer shares (locks, logger, clocks, threads, free ports).
        .target(name: "BusSupport"),
        // The ZeroMQ wrapper over CZeroMQ: context, sockets, poller, errors, socket tuning, CURVE
        // key pairs.
        .target(name: "BusZMQ", dependencies: ["CZeroMQ", "BusSupport"]),
        // The wire protocol: 7/MDP frames, request and reply bodies, event meta, topic patterns,
        // status codes and errors, endpoints, what the kernel and its clients agree on.
        .target(name: "BusWire", dependencies: ["BusZMQ", "BusSupport"]),
        // The kernel (broker, event plane, guard) with its side of security (policy, keys folder).
        .target(name: "BusKernel", dependencies: ["BusWire", "BusZMQ", "BusSupport", "CZeroMQ"]),
        // The client and service API, all a service imports; it re-exports the few lower-layer
        // types that API names (Sources/Bus/Exports.swift).
        .target(name: "Bus", dependencies: ["BusWire", "BusZMQ", "BusSupport", "CZeroMQ"]),
        // The raw-libzmq baselines `busctl bench` runs beside the bus.
        .target(name: "BusBench", dependencies: ["BusWire", "BusZMQ", "BusSupport", "CZeroMQ"]),
        .executableTarget(name: "busctl", dependencies: ["Bus", "BusKernel", "BusBench", "BusWire", "BusZMQ", "BusSupport"]),
        // The C baselines `busctl bench` runs beside the bus: plain libzmq, one process per role.
        .executableTarget(name: "CBaseline", dependencies: ["CZeroMQ"], linkerSettings: [.linkedLibrary("zmq")]),
        // Runs the kernel, an echo service and a caller in one process for instruction counting.
        .executableTarget(name: "BusProfile", dependencies: ["Bus", "BusKernel", "BusSupport"]),
        // SQLite from Debian's libsqlite3-dev, the same way as libzmq: `link "sqlite3"`, no pkgConfig.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        // The storage engine of `persist` (SQLite on dedicated threads), its bus shell and its
        // benchmark (which runs a kernel in process); unit-tested without sockets.
        .target(name: "PersistCore", dependencies: ["Bus", "CSQLite", "BusKernel"]),
        .executableTarget(name: "PersistService", dependencies: ["Bus", "PersistCore"]),
        // What every test target and BusChaos share (waiting on conditions, network namespaces).
        .target(name: "BusTestSupport", path: "Tests/BusTestSupport"),
        .testTarget(name: "PersistTests", dependencies: ["PersistCore", "Bus", "BusTestSupport"]),
        .testTarget(name: "BusTests", dependencies: ["Bus", "BusKernel", "BusWire", "BusZMQ", "BusSupport", "BusTestSupport"]),
        // libsodium from Debian's libsodium-dev (Argon2id, random bytes), as for CZeroMQ.
        .systemLibrary(name: "CSodium", path: "Sources/CSodium"),
        // The auth service's logic (reducer, providers, token store) apart from its executable,
        // so unit tests drive it without sockets.
        // The service kit: a service is a feature (state, actions, a pure reducer) run by a store
        // that does the bus, persistence, timers and effects; shared dependencies (HTTP, clocks).
        .target(name: "ServiceKit", dependencies: ["Bus"]),
        // The kit's test store (TCA style), for test targets: reports through swift-testing.
        .target(name: "ServiceKitTesting", dependencies: ["ServiceKit", "Bus"]),
        .testTarget(name: "ServiceKitTests", dependencies: ["ServiceKit", "ServiceKitTesting", "Bus", "BusTestSupport"]),
        // The smallest service on the kit, built and tested with the rest.
        .executableTarget(name: "CounterService", dependencies: ["ServiceKit", "Bus"], path: "Examples/CounterService"),
        .target(name: "AuthCore", dependencies: ["Bus", "ServiceKit", "CSodium"]),
        .executableTarget(name: "AuthService", dependencies: ["AuthCore", "Bus", "ServiceKit"]),
        // The domain services' socket-free cores, each tested against fixtures in the upstream's
        // real shapes: Open-Meteo / OpenWeatherMap and the embedded GeoNames city table (a plain
        // TSV: Foundation on Linux has no gzip decoder), Reddit, RFC 5545 iCalendar.
        .target(name: "WeatherCore", dependencies: ["ServiceKit", "Bus"], resources: [.copy("Resources/cities15000.tsv")]),
        .testTarget(
            name: "WeatherCoreTests", dependencies: ["WeatherCore", "ServiceKit", "ServiceKitTesting", "Bus", "BusTestSupport"],
            resources: [.copy("Fixtures")]),
        // The weather service: city search, forecasts, followed cities (logic in WeatherCore).
        .executableTarget(name: "WeatherService", dependencies: ["WeatherCore", "ServiceKit", "Bus"]),
        .target(name: "FeedCore", dependencies: ["Bus", "ServiceKit"]),
        .executableTarget(name: "FeedService", dependencies: ["FeedCore", "ServiceKit", "Bus"]),
        .testTarget(
            name: "FeedCoreTests", dependencies: ["FeedCore", "ServiceKit", "ServiceKitTesting", "Bus", "BusTestSupport"],
            resources: [.copy("Fixtures")]),
        // EventCore also holds the `events` service's feature (on the kit) and its sample calendar.
        .target(name: "EventCore", dependencies: ["Bus", "ServiceKit"], resources: [.copy("Resources/sample-events.ics")]),
        .executableTarget(name: "EventService", dependencies: ["EventCore", "ServiceKit", "Bus"]),
        // The .ics fixtures (written by Python's icalendar, plus hand-written malformed ones) are
        // read from disk next to the tests, not bundled.
        .testTarget(name: "EventCoreTests", dependencies: ["EventCore", "ServiceKit", "ServiceKitTesting", "Bus"], exclude: ["Fixtures"]),
        .testTarget(name: "AuthServiceTests", dependencies: ["AuthCore", "ServiceKit", "BusTestSupport"]),
        // The seeded fault run over the whole stack (scripts/chaos, docs/RELIABILITY.md).
        .executableTarget(name: "BusChaos", dependencies: ["Bus", "BusTestSupport"]),
        // A fixture service the integration tests run as a real process.
        .executableTarget(name: "BusTestService", dependencies: ["Bus"], path: "Tests/BusTestService"),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "Bus", "BusTestSupport", "ServiceKit", "busctl", "CBaseline", "BusProfile", "BusTestService", "AuthService", "PersistService",
                "CounterService", "EventService", "FeedService", "WeatherService", "BusChaos", "BusKernel", "BusWire", "BusZMQ", "BusSupport",
            ]),
        // Fuzzing (docs/FUZZING.md): every decoder of outside bytes behind one entry point, the
        // libFuzzer executable scripts/fuzz builds from it, and the corpus replayed as tests.
        .target(
            name: "FuzzTargets", dependencies: ["Bus", "BusKernel", "BusWire", "BusZMQ", "EventCore", "FeedCore", "WeatherCore"],
            path: "Tests/FuzzTargets"),
        .executableTarget(name: "BusFuzz", dependencies: ["FuzzTargets"], path: "Tests/BusFuzz"),
        .testTarget(name: "FuzzCorpusTests", dependencies: ["FuzzTargets"]),
    ],
    swiftLanguageModes: [.v6]
)
