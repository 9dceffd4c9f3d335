import Foundation

/// One row of `busctl bench`: a figure measured on its baseline and on the bus in the same run,
/// `runs` times each.
struct BenchFigure {
    var name: String
    var unit: String
    /// The baseline the ratio is taken against: the C baseline (`CBaseline`) for the ZeroMQ
    /// figures, raw SQLite for persist; empty when there is none.
    var baseline: [Double] = []
    /// The same path on the package's own Swift socket wrapper (`RawBaseline`), an extra line.
    var swiftRaw: [Double] = []
    var bus: [Double] = []
    /// "min" when the bus must reach `target` x baseline, "max" when it must stay under it,
    /// "abs" for an absolute bound on the bus figure (no baseline).
    var kind: String
    var target: Double?
    var extra: [String: Any] = [:]

    init(name: String, unit: String, kind: String, target: Double? = nil) {
        self.name = name
        self.unit = unit
        self.kind = kind
        self.target = target
    }

    /// The bus's median over the baseline's.
    var ratio: Double? { Self.ratio(bus, baseline) }

    var ratioToSwiftRaw: Double? { Self.ratio(bus, swiftRaw) }

    var met: Bool? {
        guard let target else { return nil }
        switch kind {
        case "min": return ratio.map { $0 >= target }
        case "max": return ratio.map { $0 <= target }
        default: return Self.median(bus).map { $0 <= target }
        }
    }

    static func ratio(_ values: [Double], _ reference: [Double]) -> Double? {
        guard let r = median(reference), r > 0, let v = median(values) else { return nil }
        return v / r
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Median, min, max and every run of `v`, for JSON; null when there is none.
    static func stats(_ v: [Double]) -> Any {
        guard let m = median(v), let low = v.min(), let high = v.max() else { return NSNull() }
        return ["median": m, "min": low, "max": high, "runs": v]
    }

    var object: [String: Any] {
        var o: [String: Any] = ["name": name, "unit": unit, "baseline": Self.stats(baseline), "bus": Self.stats(bus)]
        if !swiftRaw.isEmpty { o["swift_raw"] = Self.stats(swiftRaw) }
        if let ratio { o["ratio"] = ratio }
        if let ratioToSwiftRaw { o["ratio_to_swift_raw"] = ratioToSwiftRaw }
        if let target {
            o["target"] = kind == "abs" ? "<= \(target) \(unit)" : "\(kind == "min" ? ">=" : "<=") \(target)x"
        }
        if let met { o["met"] = met }
        if let ratio, let target, kind != "abs" {
            // How far the bus is from its target, as a share of the target (positive: missed).
            o["missed_by"] = kind == "min" ? max(0, 1 - ratio / target) : max(0, ratio / target - 1)
        }
        for (k, v) in extra { o[k] = v }
        return o
    }
}
