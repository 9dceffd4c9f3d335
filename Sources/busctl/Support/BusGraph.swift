import Bus
import Foundation

/// The picture of the bus built from `bus.stats`: services and clients, topics, and who
/// publishes, subscribes and calls what.
///
/// The kernel knows publishers by the `source` of their events and callers by the `caller` of
/// their requests, but a subscription only by its wire prefix (XPUB says nothing of who sent
/// it), so subscribers appear as one node per prefix, linked to every topic it covers.
struct BusGraph {
    enum NodeKind: String { case service, client, topic, subscription }

    struct Node {
        var id: String
        var kind: NodeKind
        var label: String
        var detail: String?
        var retained = false
        /// A registered service with no instance left (requests queued or recently served).
        var idle = false
    }

    enum EdgeKind: String { case publishes, subscribes, calls }

    struct Edge {
        var from: String
        var to: String
        var kind: EdgeKind
        var count: Int?
    }

    private(set) var nodes: [Node] = []
    private(set) var edges: [Edge] = []

    init(_ stats: KernelStats) {
        var names = Set<String>()
        for service in stats.services {
            let instances = service.instances.count
            nodes.append(
                Node(
                    id: "service:" + service.service, kind: .service, label: service.service,
                    detail: "\(instances) instance\(instances == 1 ? "" : "s")", idle: instances == 0))
            names.insert(service.service)
        }
        var clients = Set<String>()
        for topic in stats.topics { clients.formUnion(topic.publishers) }
        for call in stats.calls { clients.insert(call.caller) }
        for client in clients.subtracting(names).sorted() {
            nodes.append(Node(id: "service:" + client, kind: .client, label: client))
        }
        for topic in stats.topics {
            nodes.append(Node(id: "topic:" + topic.topic, kind: .topic, label: topic.topic, retained: topic.retained))
            for publisher in topic.publishers {
                edges.append(
                    Edge(
                        from: "service:" + publisher, to: "topic:" + topic.topic, kind: .publishes,
                        count: topic.publishers.count == 1 ? Int(clamping: topic.messages) : nil))
            }
        }
        for subscription in stats.subscriptions {
            let id = "subscription:" + subscription.prefix
            nodes.append(
                Node(
                    id: id, kind: .subscription, label: "subscribers " + Self.pattern(subscription.prefix),
                    detail: "×\(subscription.count)"))
            for topic in stats.topics(under: subscription.prefix) {
                edges.append(Edge(from: "topic:" + topic.topic, to: id, kind: .subscribes, count: nil))
            }
        }
        for call in stats.calls {
            edges.append(Edge(from: "service:" + call.caller, to: "service:" + call.service, kind: .calls, count: call.count))
        }
    }

    /// A wire prefix as the pattern people write: "" is `>`, "feed." is `feed.>`.
    static func pattern(_ prefix: String) -> String {
        if prefix.isEmpty { return ">" }
        if prefix.hasSuffix(".") { return prefix + ">" }
        return prefix
    }

    /// Graphviz DOT.
    func dot() -> String {
        var text = """
            digraph swiftbus {
              rankdir=LR;
              node [fontname="Helvetica", fontsize=11];
              edge [fontname="Helvetica", fontsize=9];

            """ + "\n"
        for node in nodes {
            let label = node.detail.map { "\(node.label)\n\($0)" } ?? node.label
            var attributes = ["label=\(Self.quote(label))"]
            switch node.kind {
            case .service: attributes += ["shape=box", "style=\"rounded,filled\"", "fillcolor=\"\(node.idle ? "#e5e7eb" : "#dbeafe")\""]
            case .client: attributes += ["shape=box", "style=\"rounded,dashed\""]
            case .topic: attributes += ["shape=ellipse", "style=filled", "fillcolor=\"#fef3c7\""] + (node.retained ? ["peripheries=2"] : [])
            case .subscription: attributes += ["shape=box", "style=dashed", "fontsize=9"]
            }
            text += "  \(Self.quote(node.id)) [\(attributes.joined(separator: ", "))];\n"
        }
        if !edges.isEmpty { text += "\n" }
        for edge in edges {
            var attributes: [String] = []
            switch edge.kind {
            case .publishes: if let count = edge.count { attributes.append("label=\(Self.quote("\(count)"))") }
            case .subscribes: attributes.append("style=dashed")
            case .calls:
                attributes += ["color=\"#2563eb\"", "fontcolor=\"#2563eb\"", "penwidth=1.5"]
                if let count = edge.count { attributes.append("label=\(Self.quote("\(count) call\(count == 1 ? "" : "s")"))") }
            }
            text += "  \(Self.quote(edge.from)) -> \(Self.quote(edge.to))"
            text += attributes.isEmpty ? ";\n" : " [\(attributes.joined(separator: ", "))];\n"
        }
        return text + "}\n"
    }

    /// The same graph as JSON: {"nodes":[{"id","kind","label"}],"edges":[{"from","to","kind","count"}]}.
    func jsonObject() -> [String: Any] {
        [
            "nodes": nodes.map { node -> [String: Any] in
                var object: [String: Any] = ["id": node.id, "kind": node.kind.rawValue, "label": node.label]
                if node.kind == .topic { object["retained"] = node.retained }
                if let detail = node.detail { object["detail"] = detail }
                return object
            },
            "edges": edges.map { edge -> [String: Any] in
                var object: [String: Any] = ["from": edge.from, "to": edge.to, "kind": edge.kind.rawValue]
                if let count = edge.count { object["count"] = count }
                return object
            },
        ]
    }

    static func quote(_ text: String) -> String {
        "\""
            + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
}
