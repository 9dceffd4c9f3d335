import Bus
import BusKernel
import BusWire
import BusZMQ
import EventCore
import FeedCore
import Foundation
import WeatherCore

/// One decoder of bytes that come from outside the process, as the fuzzers and the corpus
/// replay drive it: ``run(_:)`` hands the input to the real decoder (and to what the caller does
/// next with a decoded value) and returns whether it decoded or was refused with a typed error.
/// A crash, a trap or a hang in ``run(_:)`` is a bug in the decoder.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A message the kernel's ROUTER receives (``FuzzFrames`` layout): 7/MDP classification,
    /// then what the kernel reads of a request or reply body.
    case mdp
    /// A request body's frames (``FuzzFrames`` layout), three-frame or one-frame, JSON or binary meta.
    case requestBody = "request-body"
    /// A reply body's frames (``FuzzFrames`` layout).
    case replyBody = "reply-body"
    /// The meta frame of an event.
    case eventMeta = "event-meta"
    /// A meta object for the flat JSON reader.
    case flatJSON = "flat-json"
    /// A topic pattern, a newline, then a topic to match it against.
    case topicPattern = "topic-pattern"
    /// A policy file (`policy.json`).
    case policy
    /// An iCalendar file for the events importer.
    case icalendar
    /// A Reddit API answer body, read by every Reddit decoder.
    case reddit
    /// An Open-Meteo answer body, read as geocoding and as a forecast.
    case openMeteo = "open-meteo"
    /// OpenWeatherMap answer bodies: geocoding, or the current weather and the forecast split at
    /// the first NUL byte (the same bytes for both when there is none).
    case openWeatherMap = "openweathermap"
    /// A `busctl record` file, as `busctl replay` reads it.
    case recording

    /// Runs the real decoder on `bytes`. True when it decoded, false when it refused the input
    /// with its typed error.
    @discardableResult
    public func run(_ bytes: [UInt8]) -> Bool {
        switch self {
        case .mdp: return Self.mdp(FuzzFrames.split(bytes))
        case .requestBody: return Self.requestBody(FuzzFrames.split(bytes))
        case .replyBody: return Self.replyBody(FuzzFrames.split(bytes))
        case .eventMeta: return Self.eventMeta(bytes)
        case .flatJSON: return Self.flatJSON(bytes)
        case .topicPattern: return Self.topicPattern(bytes)
        case .policy: return Self.policy(bytes)
        case .icalendar: return Self.icalendar(bytes)
        case .reddit: return Self.reddit(bytes)
        case .openMeteo: return Self.openMeteo(bytes)
        case .openWeatherMap: return Self.openWeatherMap(bytes)
        case .recording: return Self.recording(bytes)
        }
    }

    private static func mdp(_ frames: Frames) -> Bool {
        let inbound: MDP.Inbound
        do { inbound = try MDP.parseInbound(frames) } catch { return false }
        switch inbound {
        case .clientRequest(_, _, let body):
            // What the kernel reads of a request before it queues it for a worker.
            _ = RequestBody.binaryMetaProblem(body)
            _ = RequestBody.peekTimeoutMs(body)
            _ = RequestBody.peekMeta(body)
            _ = RequestBody.threeFrames(body)
            _ = RequestBody.withJSONMeta(body)
            _ = RequestBody.peekMethod(frames, from: 4)
            return requestBody(body)
        case .reply:
            _ = ReplyBody.hasBinaryMeta(frames, from: 6)
            do { _ = try ReplyBody.decode(frames, from: 6) } catch { return false }
            return true
        case .ready, .heartbeat, .disconnect:
            return true
        }
    }

    private static func requestBody(_ body: Frames) -> Bool {
        _ = RequestBody.peekMethod(body, from: 0)
        do {
            let request = try RequestBody.decode(body)
            _ = request.encode()
            _ = request.encode(oneFrame: true, binaryMeta: true)
            return true
        } catch {
            return false
        }
    }

    private static func replyBody(_ body: Frames) -> Bool {
        do {
            let reply = try ReplyBody.decode(body)
            _ = reply.encode()
            _ = reply.encode(oneFrame: true, binaryMeta: true)
            return true
        } catch {
            return false
        }
    }

    private static func eventMeta(_ bytes: [UInt8]) -> Bool {
        let meta: EventMeta
        do { meta = try EventMeta.decode(bytes) } catch { return false }
        _ = meta.encode()
        var cache = EventMeta.DecodeCache()
        do { _ = try EventMeta.decode(bytes, cache: &cache) } catch { return false }
        return true
    }

    private static func recording(_ bytes: [UInt8]) -> Bool {
        let entries: [Recording.Entry]
        do { entries = try Recording.read(Data(bytes), name: "recording").1 } catch { return false }
        // What replay does next with each entry: its meta decoded again and its line written back.
        for entry in entries.prefix(64) {
            _ = try? EventMeta.decode(entry.meta)
            _ = entry.line
        }
        return true
    }

    private static func flatJSON(_ bytes: [UInt8]) -> Bool {
        var members = 0
        let valid = FlatJSON.forEachMember(bytes) { _, _ in members += 1 }
        _ = RequestMeta.parse(bytes)
        _ = ReplyMeta.parse(bytes)
        return valid
    }

    private static func topicPattern(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let topic = parts.count > 1 ? String(parts[1]) : ""
        let pattern: TopicPattern
        do { pattern = try TopicPattern(String(parts.first ?? "")) } catch { return false }
        _ = pattern.matches(topic)
        // The second line is also a subscription prefix, which a subscriber sends as it likes.
        _ = CompiledRules.covers(pattern, topic)
        _ = CompiledRules.mayOverlap(pattern, topic)
        do { try Topic.validate(topic) } catch { return false }
        return true
    }

    private static func policy(_ bytes: [UInt8]) -> Bool {
        let policy: Policy
        do { policy = try Policy.decode(Data(bytes), name: "policy.json") } catch { return false }
        for identity in ["feed", "busctl", "x"] + policy.identities.keys.sorted().prefix(4) {
            let rules = policy.compiled(for: identity)
            _ = rules.allows(.call, "auth.token")
            _ = rules.allows(.publish, "\(identity).changed")
            _ = rules.allowsSubscription(prefix: "weather.")
        }
        return true
    }

    private static let importOptions = ICalendarImportOptions(
        expansionRange: Date(timeIntervalSince1970: 1_704_067_200)..<Date(timeIntervalSince1970: 1_830_297_600))

    private static func icalendar(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try ICalendarImporter.importEvents(from: Data(bytes), options: importOptions)
            return true
        } catch {
            return false
        }
    }

    private static func reddit(_ bytes: [UInt8]) -> Bool {
        let response = RedditResponse(status: 200, headers: ["content-type": "application/json"], body: Data(bytes))
        var decoded = false
        func attempt<T>(_ decode: () throws(RedditError) -> T) {
            do {
                _ = try decode()
                decoded = true
            } catch {}
        }
        attempt { () throws(RedditError) in try response.listing(of: Post.self, for: .frontPage(sort: .hot)) }
        attempt { () throws(RedditError) in try response.listing(of: UserContentItem.self, for: nil) }
        attempt { () throws(RedditError) in try response.subredditAbout(for: .subredditAbout(name: "swift")) }
        attempt { () throws(RedditError) in try response.commentsPage(for: nil) }
        attempt { () throws(RedditError) in try response.moreChildren(for: nil) }
        attempt { () throws(RedditError) in try response.account(for: .me) }
        attempt { () throws(RedditError) in try response.subscriptionsPage(for: .mySubscriptions()) }
        attempt { () throws(RedditError) in try response.multis(for: .myMultis) }
        attempt { () throws(RedditError) in try response.subredditSearch(for: .searchSubreddits(query: "swift")) }
        attempt { () throws(RedditError) in try response.acknowledgement(for: .save(fullname: "t3_abc")) }
        for status in [400, 403, 404, 429] {
            _ = RedditResponse(status: status, headers: ["x-ratelimit-reset": "60"], body: Data(bytes)).failure(for: .me)
        }
        return decoded
    }

    private static let fetchedAt = Date(timeIntervalSince1970: 1_767_225_600)

    private static func openMeteo(_ bytes: [UInt8]) -> Bool {
        let response = UpstreamResponse(status: 200, headers: ["content-type": "application/json"], body: Data(bytes))
        var decoded = false
        do {
            _ = try OpenMeteoDecoder.cities(from: response)
            decoded = true
        } catch {}
        do {
            _ = try OpenMeteoDecoder.forecast(from: response, cityID: 2_950_159, fetchedAt: fetchedAt)
            decoded = true
        } catch {}
        _ = try? OpenMeteoDecoder.cities(from: UpstreamResponse(status: 400, body: Data(bytes)))
        return decoded
    }

    private static func openWeatherMap(_ bytes: [UInt8]) -> Bool {
        let split = bytes.firstIndex(of: 0)
        let current = Data(bytes[..<(split ?? bytes.count)])
        let forecast = split.map { Data(bytes[($0 + 1)...]) } ?? current
        var decoded = false
        do {
            _ = try OpenWeatherMapDecoder.places(from: UpstreamResponse(status: 200, body: current))
            decoded = true
        } catch {}
        do {
            _ = try OpenWeatherMapDecoder.forecast(
                current: UpstreamResponse(status: 200, body: current), forecast: UpstreamResponse(status: 200, body: forecast),
                cityID: 2_950_159, fetchedAt: fetchedAt)
            decoded = true
        } catch {}
        _ = try? OpenWeatherMapDecoder.places(from: UpstreamResponse(status: 401, body: current))
        return decoded
    }
}
