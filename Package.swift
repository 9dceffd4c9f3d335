// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "swiftbus",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Bus", targets: ["Bus"]),
        .executable(name: "busctl", targets: ["busctl"]),
        .executable(name: "PersistService", targets: ["PersistService"]),
    ],
    targets: [
        // libzmq from Debian's libzmq3-dev. A module map with `link "zmq"` and no pkgConfig:
        // pkg-config's `-isystem` flag is refused by SwiftPM on Debian 12 (see shared notes).
        .systemLibrary(name: "CZeroMQ", path: "Sources/CZeroMQ"),
        .target(name: "Bus", dependencies: ["CZeroMQ"]),
        .executableTarget(name: "busctl", dependencies: ["Bus"]),
        // SQLite from Debian's libsqlite3-dev, the same way as libzmq: `link "sqlite3"`, no pkgConfig.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        // The storage engine of `persist` (SQLite on dedicated threads), its bus shell and its
        // benchmark; unit-tested without sockets.
        .target(name: "PersistCore", dependencies: ["Bus", "CSQLite"]),
        .executableTarget(name: "PersistService", dependencies: ["Bus", "PersistCore"]),
        .testTarget(name: "PersistTests", dependencies: ["PersistCore", "Bus"]),
        .testTarget(name: "BusTests", dependencies: ["Bus"]),
        // A fixture service the integration tests run as a real process.
        .executableTarget(name: "BusTestService", dependencies: ["Bus"], path: "Tests/BusTestService"),
        .testTarget(name: "IntegrationTests", dependencies: ["Bus", "busctl", "BusTestService", "PersistService"]),
    ],
    swiftLanguageModes: [.v6]
)
