/// Turns free-text iCalendar categories into the lowercased slugs events are filed under.
public enum CategorySlug {
    /// The slug of one category: lowercased, runs of anything but letters and digits become one
    /// `-`, no `-` at either end ("Live Music" is "live-music", "音乐" stays "音乐").
    /// - Returns: the slug, empty when the text has no letter or digit.
    public static func make(_ text: String) -> String {
        var slug = ""
        var pendingDash = false
        for character in text.lowercased() {
            if character.isLetter || character.isNumber {
                if pendingDash && !slug.isEmpty { slug.append("-") }
                pendingDash = false
                slug.append(character)
            } else {
                pendingDash = true
            }
        }
        return slug
    }

    /// The slugs of several categories in their first-seen order, without empties or repeats.
    public static func make(_ texts: [String]) -> [String] {
        var seen = Set<String>()
        var slugs: [String] = []
        for text in texts {
            let slug = make(text)
            if !slug.isEmpty && seen.insert(slug).inserted { slugs.append(slug) }
        }
        return slugs
    }
}
