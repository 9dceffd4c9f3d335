/// A plain text table: columns separated by two spaces, numbers right-aligned.
struct Table {
    struct Column {
        var title: String
        var rightAligned = false
    }

    var columns: [Column]
    var rows: [[String]] = []

    init(_ columns: [Column]) { self.columns = columns }

    /// Columns by title; a title starting with `>` is right-aligned (the `>` is dropped).
    init(_ titles: String...) {
        columns = titles.map { $0.hasPrefix(">") ? Column(title: String($0.dropFirst()), rightAligned: true) : Column(title: $0) }
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    func render() -> String {
        var widths = columns.map(\.title.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (index, column) in columns.enumerated() {
                let cell = index < cells.count ? cells[index] : ""
                let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                parts.append(column.rightAligned ? pad + cell : (index == columns.count - 1 ? cell : cell + pad))
            }
            return parts.joined(separator: "  ")
        }
        var text = line(columns.map(\.title)) + "\n"
        for row in rows { text += line(row) + "\n" }
        return text
    }
}
