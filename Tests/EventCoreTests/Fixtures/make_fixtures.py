#!/usr/bin/env python3
"""Writes the iCalendar fixtures of EventCoreTests with Python's icalendar library.

The fixtures come from an implementation independent of EventCore, so the Swift importer is
tested against what another RFC 5545 producer writes (folding, escaping, TZID, RRULE).
Run from anywhere: python3 make_fixtures.py (installs Tests/interop/requirements.txt when missing).
The outputs are committed; the tests do not run this script.
"""

import importlib.util
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent

if importlib.util.find_spec("icalendar") is None or importlib.util.find_spec("recurring_ical_events") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-r", str(HERE.parents[1] / "interop" / "requirements.txt")], check=True)

from zoneinfo import ZoneInfo  # noqa: E402

from icalendar import Calendar, Event, vRecur  # noqa: E402

STAMP = datetime(2025, 1, 1, tzinfo=timezone.utc)
SHANGHAI = ZoneInfo("Asia/Shanghai")
NEW_YORK = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")


def calendar(*events, timezones=False):
    cal = Calendar()
    cal.add("prodid", "-//swiftbus//events fixtures//EN")
    cal.add("version", "2.0")
    for event in events:
        cal.add_component(event)
    if timezones:
        cal.add_missing_timezones()
    return cal


def event(uid, summary, start, end=None, **props):
    ev = Event()
    if uid is not None:
        ev.add("uid", uid)
    ev.add("dtstamp", STAMP)
    if start is not None:
        ev.add("dtstart", start)
    if end is not None:
        ev.add("dtend", end)
    ev.add("summary", summary)
    for name, value in props.items():
        name = name.replace("_", "-")
        values = value if isinstance(value, list) and name in ("exdate", "categories-repeated") else [value]
        for item in values:
            ev.add(name.replace("-repeated", ""), item)
    return ev


def write(name, cal):
    (HERE / name).write_bytes(cal.to_ical())


# The fixture of the shared notes: a weekly jazz night in Shanghai.
jazz = event(
    "jazz-night@events.swiftbus.test",
    "Jazz night",
    datetime(2025, 3, 1, 20, 0, tzinfo=SHANGHAI),
    datetime(2025, 3, 1, 23, 0, tzinfo=SHANGHAI),
    location="JZ Club, 46 Fuxing Road",
    geo=(31.2105, 121.4440),
    categories=["MUSIC", "NIGHTLIFE"],
    status="CONFIRMED",
    rrule={"freq": "weekly", "count": 4},
    x_swiftbus_capacity="80",
)
write("jazz-weekly.ics", calendar(jazz))

# Long UTF-8 text that folds, and every TEXT escape.
text = event(
    "text@events.swiftbus.test",
    "上海外滩灯光秀 🎆 Bund light show; fireworks, music \\ and more — 一起来看吧！一起来看吧！",
    datetime(2025, 5, 1, 12, 0, tzinfo=timezone.utc),
    datetime(2025, 5, 1, 14, 0, tzinfo=timezone.utc),
    description="Line one\nLine two; with a semicolon, a comma and a backslash \\ here.\n"
    + "第三行：很长的中文描述，用来测试按八位组折行而不拆开多字节字符。" * 3,
    location="外滩, 中山东一路",
    categories_repeated=[["Festival", "Outdoor"], ["Live Music"]],
    url="https://events.swiftbus.test/e/text?x=1&y=2",
)
write("text.ics", calendar(text))

times = calendar(
    event("utc@events.swiftbus.test", "UTC talk", datetime(2025, 6, 2, 9, 30, tzinfo=timezone.utc),
          datetime(2025, 6, 2, 10, 45, tzinfo=timezone.utc)),
    event("new-york@events.swiftbus.test", "Rooftop film", datetime(2025, 7, 4, 20, 0, tzinfo=NEW_YORK),
          datetime(2025, 7, 4, 22, 0, tzinfo=NEW_YORK), x_swiftbus_capacity="120"),
    event("floating@events.swiftbus.test", "Morning run", datetime(2025, 6, 7, 7, 0), datetime(2025, 6, 7, 8, 0)),
    event("all-day@events.swiftbus.test", "Dragon Boat Festival", date(2025, 5, 31), date(2025, 6, 1)),
    event("multi-day@events.swiftbus.test", "Art fair", date(2025, 9, 5), date(2025, 9, 8)),
    event("duration@events.swiftbus.test", "Workshop", datetime(2025, 8, 1, 14, 0, tzinfo=BERLIN),
          duration=timedelta(hours=1, minutes=30)),
    event("cancelled@events.swiftbus.test", "Open-air concert", datetime(2025, 8, 9, 19, 0, tzinfo=timezone.utc),
          datetime(2025, 8, 9, 21, 0, tzinfo=timezone.utc), status="CANCELLED", sequence=2),
    event("tentative@events.swiftbus.test", "Maybe picnic", datetime(2025, 8, 10, 11, 0, tzinfo=timezone.utc),
          datetime(2025, 8, 10, 13, 0, tzinfo=timezone.utc), status="TENTATIVE"),
    timezones=True,
)
write("times.ics", times)

override = event(
    "dst-weekly@events.swiftbus.test", "Pub quiz (moved)",
    datetime(2025, 3, 19, 20, 0, tzinfo=NEW_YORK), datetime(2025, 3, 19, 22, 0, tzinfo=NEW_YORK), sequence=1,
)
override.add("recurrence-id", datetime(2025, 3, 18, 19, 0, tzinfo=NEW_YORK))
recurring = calendar(
    event("daily@events.swiftbus.test", "Morning yoga", datetime(2025, 4, 28, 6, 30, tzinfo=timezone.utc),
          datetime(2025, 4, 28, 7, 30, tzinfo=timezone.utc),
          rrule={"freq": "daily", "until": datetime(2025, 5, 2, 6, 30, tzinfo=timezone.utc)}),
    event("mwf@events.swiftbus.test", "Lunch walk", datetime(2025, 4, 7, 12, 0, tzinfo=BERLIN),
          datetime(2025, 4, 7, 12, 45, tzinfo=BERLIN), rrule={"freq": "weekly", "byday": ["MO", "WE", "FR"], "count": 6}),
    event("dst-weekly@events.swiftbus.test", "Pub quiz", datetime(2025, 2, 25, 19, 0, tzinfo=NEW_YORK),
          datetime(2025, 2, 25, 21, 0, tzinfo=NEW_YORK), rrule={"freq": "weekly", "count": 6},
          exdate=[datetime(2025, 3, 11, 19, 0, tzinfo=NEW_YORK)]),
    override,
    event("last-friday@events.swiftbus.test", "Night market", datetime(2025, 1, 31, 18, 0, tzinfo=SHANGHAI),
          datetime(2025, 1, 31, 23, 0, tzinfo=SHANGHAI), rrule={"freq": "monthly", "byday": ["-1FR"], "count": 4}),
    event("first-monday@events.swiftbus.test", "Book club", datetime(2025, 1, 6, 19, 0, tzinfo=SHANGHAI),
          datetime(2025, 1, 6, 21, 0, tzinfo=SHANGHAI),
          rrule={"freq": "monthly", "byday": ["1MO"], "until": datetime(2025, 5, 31, 15, 59, 59, tzinfo=timezone.utc)}),
    event("month-days@events.swiftbus.test", "Flea market", datetime(2025, 1, 15, 9, 0, tzinfo=timezone.utc),
          datetime(2025, 1, 15, 13, 0, tzinfo=timezone.utc),
          rrule={"freq": "monthly", "bymonthday": [15, -1], "count": 5}),
    event("fortnight@events.swiftbus.test", "Farmers market", date(2025, 6, 1), date(2025, 6, 2),
          rrule={"freq": "weekly", "interval": 2, "count": 3}, exdate=[date(2025, 6, 15)]),
)
write("recurring.ics", recurring)

skips = calendar(
    event(None, "No UID", datetime(2025, 5, 1, 10, 0, tzinfo=timezone.utc)),
    event("no-start@events.swiftbus.test", "No DTSTART", None),
    event("setpos@events.swiftbus.test", "Last weekday", datetime(2025, 1, 31, 9, 0, tzinfo=timezone.utc),
          rrule=vRecur.from_ical("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1")),
    event("yearly@events.swiftbus.test", "Anniversary", date(2025, 3, 3), rrule={"freq": "yearly"}),
    event("kept@events.swiftbus.test", "Kept", datetime(2025, 5, 2, 10, 0, tzinfo=timezone.utc)),
)
mars = event("mars@events.swiftbus.test", "Mars time", None)
mars.add("dtstart", datetime(2025, 5, 3, 10, 0), parameters={"TZID": "Mars/Olympus_Mons"})
skips.add_component(mars)
write("skips.ics", skips)
