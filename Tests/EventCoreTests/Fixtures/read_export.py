#!/usr/bin/env python3
"""Parses an iCalendar document from stdin with Python's icalendar and prints its VEVENTs as
JSON, so ICalendarInteropTests can check what an independent parser reads in EventCore's export.
Exits 1 with the parser's message when icalendar rejects the document."""

import json
import sys
from datetime import date, datetime, timezone

from icalendar import Calendar


def when(prop):
    if prop is None:
        return None
    value = prop.dt
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return {"floating": value.isoformat()}
        tzid = prop.params.get("TZID")
        return {"utc": value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "tzid": tzid}
    if isinstance(value, date):
        return {"date": value.isoformat()}
    raise TypeError(f"unexpected {type(value)}")


def categories(component):
    found = component.get("categories")
    if found is None:
        return []
    items = found if isinstance(found, list) else [found]
    return [str(cat) for item in items for cat in item.cats]


def main():
    try:
        calendar = Calendar.from_ical(sys.stdin.buffer.read())
    except Exception as error:  # the test prints why icalendar refused the export
        print(f"icalendar rejected the document: {error}", file=sys.stderr)
        return 1
    events = []
    for component in calendar.walk("VEVENT"):
        geo = component.get("geo")
        events.append({
            "uid": str(component.get("uid")),
            "recurrence_id": when(component.get("recurrence-id")),
            "sequence": int(component.get("sequence", 0)),
            "summary": str(component.get("summary", "")),
            "description": None if component.get("description") is None else str(component.get("description")),
            "location": None if component.get("location") is None else str(component.get("location")),
            "geo": None if geo is None else [geo.latitude, geo.longitude],
            "categories": categories(component),
            "url": None if component.get("url") is None else str(component.get("url")),
            "status": None if component.get("status") is None else str(component.get("status")),
            "x_status": None if component.get("x-swiftbus-status") is None else str(component.get("x-swiftbus-status")),
            "capacity": None if component.get("x-swiftbus-capacity") is None else str(component.get("x-swiftbus-capacity")),
            "dtstamp": when(component.get("dtstamp")),
            "dtstart": when(component.get("dtstart")),
            "dtend": when(component.get("dtend")),
        })
    json.dump({"prodid": str(calendar.get("prodid")), "version": str(calendar.get("version")), "events": events},
              sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
