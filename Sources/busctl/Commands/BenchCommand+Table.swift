import Foundation

/// The table `busctl bench` prints, and its progress line on stderr.
extension BenchCommand {
    func format(_ value: Double?, _ unit: String) -> String {
        guard let value else { return "-" }
        if unit == "msg/s" || unit == "req/s" || unit == "events/s" {
            return value >= 1e6 ? String(format: "%.2f M", value / 1e6) : String(format: "%.0f k", value / 1e3)
        }
        return String(format: "%.1f", value)
    }

    func printTable(_ figures: [BenchFigure]) {
        func cell(_ v: [Double], _ unit: String) -> String {
            guard let m = BenchFigure.median(v), let low = v.min(), let high = v.max() else { return "-" }
            return "\(format(m, unit)) [\(format(low, unit))-\(format(high, unit))]"
        }
        func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        print(pad("figure", 40) + "unit      " + pad("baseline (C libzmq)", 28) + pad("bus", 28) + "ratio   target")
        for f in figures {
            let ratio = f.ratio.map { String(format: "%.2fx", $0) } ?? "-"
            var target = ""
            if let t = f.target {
                target = f.kind == "abs" ? "<= \(Int(t)) \(f.unit)" : String(format: "%@ %.1fx", f.kind == "min" ? ">=" : "<=", t)
                if f.met == true {
                    target += "  met"
                } else if let ratio = f.ratio {
                    let by = f.kind == "min" ? 1 - ratio / t : ratio / t - 1
                    target += String(format: "  MISSED by %.0f%%", by * 100)
                } else {
                    target += "  MISSED"
                }
            }
            print(pad(f.name, 40) + pad(f.unit, 10) + pad(cell(f.baseline, f.unit), 28) + pad(cell(f.bus, f.unit), 28) + pad(ratio, 8) + target)
            if let lostC = f.extra["lost_c"], let lostBus = f.extra["lost_bus"] {
                // C subscribers that stopped at the window's end with messages still queued are
                // left out of C's loss count; when all did, it counted nothing.
                let cut = f.extra["c_subscribers_cut"] as? Int ?? 0
                let total = f.extra["c_subscriber_runs"] as? Int ?? 0
                let c =
                    cut == 0
                    ? "\(lostC)"
                    : cut >= total
                        ? "not measured (every C subscriber stopped at its window's end with messages still queued)"
                        : "\(lostC) (\(cut) of \(total) C subscriber runs stopped at the window's end with messages still queued: not counted)"
                print("    lost: C \(c), bus \(lostBus)" + (f.extra["lost_swift_raw"].map { ", Swift raw \($0)" } ?? ""))
            }
            if let ceiling = f.extra["frame_ceiling"] as? Double {
                print("    C with the bus's frames reaches \(String(format: "%.2fx", ceiling)) of C with one frame (the frame ceiling)")
            }
            if !f.swiftRaw.isEmpty {
                let ofRaw = f.ratioToSwiftRaw.map { String(format: "; bus %.2fx of it", $0) } ?? ""
                print("    Swift raw path (the package's wrapper): \(cell(f.swiftRaw, f.unit))\(ofRaw)")
            }
        }
    }

    func progress(_ text: String) {
        let tty = isatty(2) == 1
        FileHandle.standardError.write(Data((tty ? "\r\u{1B}[2Kbench: \(text)" : "bench: \(text)\n").utf8))
    }

    func clearProgress() {
        if isatty(2) == 1 { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }
}
