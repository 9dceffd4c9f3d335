import Bus
import Foundation

/// How a new `events` instance takes over from a running one without losing a change.
///
/// `events` owns its state: two instances serving at once would each change their own copy
/// and one copy's likes would be lost. So a starting instance, before it restores, asks the
/// running one to hand over (`events.handover`, answered by the only registered instance):
/// that one answers, then sends itself SIGTERM and drains as usual (leaves the kernel, answers
/// what it holds, flushes its publishes, exits). The new instance waits until it has left the
/// kernel and, on the same host, until its process is gone, then restores the state it
/// published last. Meanwhile the kernel holds the requests for `events` (no worker), and they
/// are answered once the new instance registers: none fails as long as its deadline is longer
/// than the gap (a restore; well under a second locally). This is how `busctl replace events`
/// swaps binaries with no lost like.
public enum EventsHandover {
    /// The answer to `handover`: who is stepping down.
    public struct Info: Codable, Equatable, Sendable {
        public var instance: String
        public var host: String
        public var pid: Int

        /// Creates an answer.
        public init(instance: String, host: String, pid: Int) {
            self.instance = instance
            self.host = host
            self.pid = pid
        }

        /// This process's.
        public static func current(instance: String) -> Info {
            Info(instance: instance, host: ProcessInfo.processInfo.hostName, pid: Int(ProcessInfo.processInfo.processIdentifier))
        }
    }

    /// SIGTERM to this process: ``ServiceMain`` then drains and exits 0.
    @Sendable public static func stopThisProcess() {
        kill(getpid(), SIGTERM)
    }

    /// Asks every registered `events` instance to hand over and waits until each is gone (at
    /// most `deadline` in all). An instance that does not answer (killed, its heartbeat not
    /// yet expired) is left to expire; the start goes on.
    public static func takeOver(bus: BusClient, logger: Logger, deadline: Duration = .seconds(15)) async {
        let end = ContinuousClock.now + deadline
        var asked = Set<String>()
        while ContinuousClock.now < end {
            let others = ((try? await bus.services(timeout: .seconds(2))) ?? []).first { $0.service == "events" }?.instances ?? []
            let running = others.filter { $0.instance != bus.instance }
            guard !running.isEmpty else { return }
            if running.allSatisfy({ asked.contains($0.instance) }) {
                try? await Task.sleep(for: .milliseconds(20))
                continue
            }
            let info: Info
            do throws(BusError) {
                info = try await bus.request("events", "handover", [String: String](), timeout: .seconds(3))
            } catch {
                logger.warning("a running events instance did not hand over; starting anyway", metadata: ["error": "\(error)"])
                return
            }
            asked.insert(info.instance)
            logger.info("taking over from \(info.instance) (pid \(info.pid)); waiting until it is gone")
            while ContinuousClock.now < end, !isGone(info) { try? await Task.sleep(for: .milliseconds(10)) }
        }
        logger.warning("the previous events instance did not stop within \(deadline); starting anyway")
    }

    /// Whether the process of `info` has exited (on another host: cannot tell, so yes once it
    /// left the kernel, which the caller checks).
    static func isGone(_ info: Info) -> Bool {
        guard info.host == ProcessInfo.processInfo.hostName else { return true }
        if kill(pid_t(info.pid), 0) != 0 && errno == ESRCH { return true }
        // Exited but not yet reaped by its parent (a zombie): gone for this purpose.
        guard let stat = try? String(contentsOfFile: "/proc/\(info.pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
}
