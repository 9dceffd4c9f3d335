import Foundation

/// Network namespaces standing in for separate hosts: a switch namespace with a bridge, and one
/// namespace per host joined to it by a veth pair (`eth0` inside the host), on a private /24
/// whose addresses exist only inside these namespaces. Names carry the test process's pid and a
/// random tag, so runs never share a namespace; ``remove()`` deletes them all, and a run that
/// died without removing its own has them deleted by the next run (``sweepOrphans()``).
/// The test process itself never sends to these addresses: everything runs inside.
/// Used by the multi-host tests and by the fault run (`BusChaos --net`).
public struct NetworkNamespaces: Sendable {
    public static let prefix = "swiftbus-mh-"
    public static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why these tests cannot run here, nil when they can: creating namespaces needs root and
    /// iproute2.
    public static var unavailableReason: String? {
        if getuid() != 0 { return "network namespaces need root (uid \(getuid())); the multi-host test runs as root only" }
        if ip == nil { return "iproute2's `ip` is not installed (apt-get install iproute2)" }
        return nil
    }

    /// The switch's namespace and each host's, in host order (host 1 first).
    public let switchName: String
    public let hostNames: [String]
    /// The first three octets of the hosts' /24, e.g. "10.213.7".
    public let subnet: String

    /// A set made by ``create(hosts:)``, named again (by another process of the same run).
    public init(switchName: String, hostNames: [String], subnet: String) {
        self.switchName = switchName
        self.hostNames = hostNames
        self.subnet = subnet
    }

    /// Host `n`'s (1-based) address inside the namespaces.
    public func address(_ host: Int) -> String { "\(subnet).\(host)" }

    /// Host `n`'s namespace name.
    public func name(_ host: Int) -> String { hostNames[host - 1] }

    /// Creates the switch and `hosts` hosts. Throws with `ip`'s message when a step fails, after
    /// removing what was made.
    public static func create(hosts: Int) async throws -> NetworkNamespaces {
        guard let ip else { throw CommandError("iproute2's `ip` is not installed") }
        await sweepOrphans()
        let tag = "\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        let namespaces = NetworkNamespaces(
            switchName: "\(prefix)\(tag)-sw", hostNames: (1...hosts).map { "\(prefix)\(tag)-h\($0)" }, subnet: await freeSubnet())
        do {
            let sw = namespaces.switchName
            try await run(ip, ["netns", "add", sw])
            try await run(ip, ["-n", sw, "link", "add", "br0", "type", "bridge"])
            try await run(ip, ["-n", sw, "link", "set", "br0", "up"])
            try await run(ip, ["-n", sw, "link", "set", "lo", "up"])
            for host in 1...hosts {
                let name = namespaces.name(host)
                try await run(ip, ["netns", "add", name])
                try await run(ip, ["-n", sw, "link", "add", "p\(host)", "type", "veth", "peer", "name", "eth0", "netns", name])
                try await run(ip, ["-n", sw, "link", "set", "p\(host)", "master", "br0", "up"])
                try await run(ip, ["-n", name, "link", "set", "lo", "up"])
                try await run(ip, ["-n", name, "addr", "add", "\(namespaces.address(host))/24", "dev", "eth0"])
                try await run(ip, ["-n", name, "link", "set", "eth0", "up"])
            }
        } catch {
            await namespaces.remove()
            throw error
        }
        return namespaces
    }

    /// The executable and arguments that run `command` inside host `n`'s namespace
    /// (`ip netns exec` execs it in place: the pid is the command's).
    public func inside(_ host: Int, _ executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        (Self.ip ?? "ip", ["netns", "exec", name(host), executable] + arguments)
    }

    /// Gives host `n` its own resolver: `resolvConf` as its `resolv.conf`, and an
    /// `nsswitch.conf` that looks host names up in `/etc/hosts` and then with glibc's own DNS
    /// client, so no lookup goes to a daemon outside the namespace (systemd-resolved's NSS
    /// module). `ip netns exec` mounts the files of `/etc/netns/<name>/` over `/etc`'s for what it
    /// starts; ``remove()`` deletes the folder. nscd, when it runs, would still answer from
    /// outside: see ``resolverUnavailableReason``.
    public func setResolver(_ host: Int, resolvConf: String) throws {
        let folder = Self.etcFolder(name(host))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try resolvConf.write(toFile: folder + "/resolv.conf", atomically: true, encoding: .utf8)
        try "hosts: files dns\n".write(toFile: folder + "/nsswitch.conf", atomically: true, encoding: .utf8)
    }

    /// Why a host's own resolver (``setResolver(_:resolvConf:)``) cannot be relied on here, nil
    /// when it can: glibc asks nscd first when its socket exists.
    public static var resolverUnavailableReason: String? {
        FileManager.default.fileExists(atPath: "/var/run/nscd/socket") ? "nscd runs: lookups would be answered outside the namespace" : nil
    }

    private static func etcFolder(_ name: String) -> String { "/etc/netns/\(name)" }

    /// Deletes `/etc/netns/<name>` (`/etc/netns` itself stays: `ip netns` may have made it, or
    /// the machine's own configuration).
    private static func removeEtcFolder(_ name: String) {
        try? FileManager.default.removeItem(atPath: etcFolder(name))
    }

    /// Cuts (or restores) host `n`'s cable: its `eth0` down or up.
    public func setLink(_ host: Int, up: Bool) async throws {
        try await Self.run(Self.ip ?? "ip", ["-n", name(host), "link", "set", "eth0", up ? "up" : "down"])
    }

    /// Slows host `n`'s outgoing traffic with a token bucket (`tc qdisc replace dev eth0 root
    /// tbf <parameters>`, e.g. `rate 1mbit burst 32kbit latency 400ms`; netem is not in every
    /// kernel, tbf is), or removes it (nil).
    public func shape(_ host: Int, tbf parameters: [String]?) async throws {
        let command: [String] =
            if let parameters { ["tc", "qdisc", "replace", "dev", "eth0", "root", "tbf"] + parameters } else {
                ["tc", "qdisc", "del", "dev", "eth0", "root"]
            }
        let inside = inside(host, command[0], Array(command.dropFirst()))
        try await Self.run(inside.executable, inside.arguments)
    }

    /// Deletes every namespace of this set (their veth pairs go with them). Processes still
    /// inside keep a deleted namespace alive: stop them first.
    public func remove() async {
        for name in hostNames + [switchName] {
            _ = try? await Self.run(Self.ip ?? "ip", ["netns", "del", name])
            Self.removeEtcFolder(name)
        }
    }

    /// Deletes namespaces left by runs whose test process is gone (killed before cleaning up).
    public static func sweepOrphans() async {
        guard let ip, let listing = try? await run(ip, ["netns", "list"]) else { return }
        for line in listing.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count).split(separator: "-").first ?? "") else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                _ = try? await run(ip, ["netns", "del", name])
                removeEtcFolder(name)
            }
        }
    }

    /// A 10.x.y.0/24 that no address or route of this machine's own namespace overlaps (only
    /// read here, so the run's subnet cannot be mistaken for a real network).
    private static func freeSubnet() async -> String {
        let used =
            ((try? await run(ip ?? "ip", ["-4", "-o", "addr", "show"])) ?? "") + ((try? await run(ip ?? "ip", ["-4", "route", "show"])) ?? "")
        var candidate = "10.200.0"
        for _ in 0..<100 {
            candidate = "10.\(Int.random(in: 200...250)).\(Int.random(in: 0...255))"
            if !used.contains("\(candidate).") { break }
        }
        return candidate
    }

    /// Runs `ip` (or another short command) and returns its output; throws with its stderr.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String]) async throws -> String {
        try await Command.run(executable, arguments)
    }
}
