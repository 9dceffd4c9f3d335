// The `events` service: local events by category with likes, going lists and waitlists, on
// the service kit (Sources/EventCore/Service). See README "EventService".
import Bus
import EventCore
import Foundation
import ServiceKit

let options = [
    OptionSpec(
        "import", value: "FILE",
        help: "An iCalendar file imported at the first start (when no saved index is restored); a malformed file stops the start (78)."),
    OptionSpec(
        "import-sample", help: "As --import, with the sample calendar shipped with the service (sample data); --import wins. busctl up passes it."),
]

await FeatureService.run(
    name: "events", overview: "Local events by category with likes, going lists and waitlists; iCalendar import and export.",
    options: options
) { context in
    let calendar = try EventsStartup.initialCalendar(path: context.arguments.value("import"), sample: context.arguments.flag("import-sample"))
    // Before restoring: a running instance hands over and stops, so its last changes are saved
    // before this one reads them (see EventsHandover).
    await EventsHandover.takeOver(bus: context.bus, logger: context.logger)
    return EventsService.definition(feature: Events(initialCalendar: calendar), instance: context.bus.instance, logger: context.logger)
}
