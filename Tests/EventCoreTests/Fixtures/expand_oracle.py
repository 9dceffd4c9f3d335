#!/usr/bin/env python3
"""The RRULE oracle: expands an .ics file with recurring-ical-events (which honours RRULE,
EXDATE and RECURRENCE-ID overrides) and prints the occurrences as JSON.

Usage: expand_oracle.py FILE FROM TO   (FROM/TO as 2025-01-01T00:00:00Z; TO exclusive)
Prints [{"uid", "start", "end"}] sorted by uid then start, instants in UTC (dates for all-day).
"""

import json
import sys
from datetime import date, datetime, timezone

import recurring_ical_events
from icalendar import Calendar


def instant(value):
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)  # floating read as UTC, as the tests import it
        return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"unexpected {type(value)}")


def main():
    path, start, end = sys.argv[1:4]
    parse = lambda text: datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    with open(path, "rb") as handle:
        calendar = Calendar.from_ical(handle.read())
    occurrences = recurring_ical_events.of(calendar).between(parse(start), parse(end))
    rows = [{"uid": str(ev.get("uid")), "start": instant(ev.get("dtstart").dt), "end": instant(ev.get("dtend").dt)}
            for ev in occurrences]
    rows.sort(key=lambda row: (row["uid"], row["start"]))
    json.dump(rows, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
