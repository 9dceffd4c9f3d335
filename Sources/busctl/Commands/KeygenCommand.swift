import Bus
import Foundation

/// `busctl keygen NAME`: a CURVE key pair in the czmq / pyzmq `zmq.auth` certificate format.
struct KeygenCommand: BusctlCommand {
    static let name = "keygen"
    static let overview = "Create a CURVE key pair (NAME.key, NAME.key_secret) for the kernel, a service or a client."
    static let usage = "NAME [--dir DIR] [--authorize] [--force]"
    static let maxPositionals: Int? = 1
    static let options = [
        OptionSpec("dir", value: "DIR", help: "Where to write the files (default: $BUS_KEYS or the current folder)."),
        OptionSpec("authorize", help: "Also copy NAME.key into DIR/authorized/, admitting NAME to a kernel using DIR."),
        OptionSpec("force", help: "Overwrite existing files."),
        OptionSpec("json", help: "Print the paths and public key as JSON."),
    ]
    static let discussion: String? = """
        The secret file is written with mode 0600. The files are ZPL text as written by czmq's
        zcert and read by pyzmq's zmq.auth.load_certificate, and the other way round. The kernel
        admits identity NAME when DIR/authorized/NAME.key holds NAME's public key; see README.
        """

    let identity: String
    let directory: URL
    let authorize: Bool
    let force: Bool
    let json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let name = arguments.positionals.first else { throw UsageError("missing NAME (e.g. kernel, auth, busctl)") }
        guard (try? TopicPattern(name))?.isLiteral == true, !name.contains(".") else {
            throw UsageError("NAME '\(name)' must be one token of a-z, 0-9, '_' or '-'")
        }
        identity = name
        let dir = arguments.value("dir") ?? ProcessInfo.processInfo.environment["BUS_KEYS"] ?? FileManager.default.currentDirectoryPath
        directory = URL(fileURLWithPath: dir)
        authorize = arguments.flag("authorize")
        force = arguments.flag("force")
        json = arguments.flag("json")
    }

    func run() async throws -> Int32 {
        let secret = directory.appendingPathComponent("\(identity).key_secret")
        if !force, FileManager.default.fileExists(atPath: secret.path) {
            throw CommandFailure("\(secret.path) exists; use --force to replace it", code: ExitCode.failure)
        }
        let pair: CurveKeyPair
        do {
            pair = try CurveKeyPair.generate()
        } catch {
            throw CommandFailure("\(error)", code: ExitCode.configError)
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try pair.write(name: identity, to: directory)
        var authorized: String?
        if authorize {
            let dir = directory.appendingPathComponent("authorized")
            try CurveKeyPair(publicKey: pair.publicKey, secretKey: nil).write(name: identity, to: dir)
            authorized = dir.appendingPathComponent("\(identity).key").path
        }
        let publicPath = directory.appendingPathComponent("\(identity).key").path
        if json {
            var object: [String: Any] = ["name": identity, "public_key": pair.publicZ85, "public": publicPath, "secret": secret.path]
            if let authorized { object["authorized"] = authorized }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("public key  \(pair.publicZ85)")
            print("wrote       \(publicPath)")
            print("wrote       \(secret.path) (mode 0600)")
            if let authorized { print("authorized  \(authorized)") }
        }
        return ExitCode.ok
    }
}
