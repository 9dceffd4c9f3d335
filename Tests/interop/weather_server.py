"""A local stand-in for Open-Meteo and OpenWeatherMap on 127.0.0.1, for the weather tests.

It answers in the providers' documented JSON: Open-Meteo's geocoding `/v1/search` (a handful of
GeoNames places in its result shape) and `/v1/forecast` (the fixture in
Tests/WeatherCoreTests/Fixtures, with the coordinates asked for), OpenWeatherMap's
`/geo/1.0/direct`, `/data/2.5/weather` and `/data/2.5/forecast` (its fixtures, the key checked
as `appid`), and each provider's error bodies. A test switches how it answers through
`/_control?mode=...`:

  normal        the documented answers
  status:N      HTTP N with the provider's error body (500, 429 with Retry-After: 30, 401, 404)
  invalid       200 with a body that is not JSON
  delay:S       the normal answer after S seconds

`/_stats` returns how many requests each path got. Prints `PORT n` once listening; SIGTERM or
SIGINT stops it (exit 0).
Usage: weather_server.py --fixtures DIR [--owm-key KEY] [--port N]
"""

import argparse
import json
import os
import signal
import sys
import threading
import time
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

# Open-Meteo geocoding results (GeoNames ids, the fields its API documents).
PLACES = [
    {"id": 2657896, "name": "Zürich", "latitude": 47.36667, "longitude": 8.55, "elevation": 429.0, "feature_code": "PPLA",
     "country_code": "CH", "country_id": 2658434, "country": "Switzerland", "admin1_id": 2657895, "admin1": "Zurich",
     "timezone": "Europe/Zurich", "population": 341730, "postcodes": ["8000"]},
    {"id": 2657908, "name": "Zug", "latitude": 47.17242, "longitude": 8.51745, "elevation": 425.0, "feature_code": "PPLA",
     "country_code": "CH", "country_id": 2658434, "country": "Switzerland", "admin1_id": 2657907, "admin1": "Zug",
     "timezone": "Europe/Zurich", "population": 23435},
    {"id": 2661552, "name": "Bern", "latitude": 46.94809, "longitude": 7.44744, "elevation": 542.0, "feature_code": "PPLC",
     "country_code": "CH", "country_id": 2658434, "country": "Switzerland", "admin1_id": 2661551, "admin1": "Bern",
     "timezone": "Europe/Zurich", "population": 121631},
    {"id": 2950159, "name": "Berlin", "latitude": 52.52437, "longitude": 13.41053, "elevation": 74.0, "feature_code": "PPLC",
     "country_code": "DE", "country_id": 2921044, "country": "Germany", "admin1_id": 2950157, "admin1": "Land Berlin",
     "timezone": "Europe/Berlin", "population": 3426354},
    {"id": 2988507, "name": "Paris", "latitude": 48.85341, "longitude": 2.3488, "elevation": 42.0, "feature_code": "PPLC",
     "country_code": "FR", "country_id": 3017382, "country": "France", "admin1_id": 3012874, "admin1": "Île-de-France",
     "timezone": "Europe/Paris", "population": 2138551},
    {"id": 1796236, "name": "Shanghai", "latitude": 31.22222, "longitude": 121.45806, "elevation": 12.0, "feature_code": "PPLA",
     "country_code": "CN", "country_id": 1814991, "country": "China", "admin1_id": 1796231, "admin1": "Shanghai",
     "timezone": "Asia/Shanghai", "population": 24874500},
]

OWM_401 = {"cod": 401, "message": "Invalid API key. Please see https://openweathermap.org/faq#error401 for more info."}
OWM_404 = {"cod": "404", "message": "city not found"}
OWM_429 = {"cod": 429, "message": "Your account is temporary blocked due to exceeding of requests limitation of your "
           "subscription type. Please choose the proper subscription https://openweathermap.org/price"}


def fold(text):
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


class State:
    def __init__(self, fixtures, owm_key):
        self.fixtures = fixtures
        self.owm_key = owm_key
        self.mode = "normal"
        self.stats = {}
        self.lock = threading.Lock()

    def fixture(self, name):
        with open(os.path.join(self.fixtures, name), "rb") as f:
            return json.load(f)


class Handler(BaseHTTPRequestHandler):
    server_version = "weather-test-server"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, body, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        state = self.server.state
        url = urlparse(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path == "/_control":
            with state.lock:
                state.mode = query.get("mode", "normal")
            return self.send_json(200, {"mode": state.mode})
        if url.path == "/_stats":
            with state.lock:
                return self.send_json(200, dict(state.stats))
        with state.lock:
            state.stats[url.path] = state.stats.get(url.path, 0) + 1
            mode = state.mode
        owm = url.path.startswith("/geo/") or url.path.startswith("/data/")
        if mode.startswith("delay:"):
            time.sleep(float(mode.split(":", 1)[1]))
        elif mode == "invalid":
            return self.send_json(200, b"<html><body>502 Bad Gateway</body></html>")
        elif mode.startswith("status:"):
            return self.error(int(mode.split(":", 1)[1]), owm)
        if owm:
            return self.openweathermap(url.path, query)
        return self.open_meteo(url.path, query)

    def error(self, status, owm):
        headers = {"Retry-After": "30"} if status == 429 else {}
        if owm:
            body = {401: OWM_401, 404: OWM_404, 429: OWM_429}.get(status, {"cod": status, "message": "Internal error"})
        else:
            reasons = {429: "Too many requests", 400: "Parameter count must be between 1 and 100."}
            body = {"error": True, "reason": reasons.get(status, "Internal Server Error")}
        self.send_json(status, body, headers)

    def open_meteo(self, path, query):
        state = self.server.state
        if path == "/v1/search":
            count = int(query.get("count", "10"))
            if not 1 <= count <= 100:
                return self.error(400, False)
            name = fold(query.get("name", ""))
            body = {"generationtime_ms": 0.4}
            if len(name) >= 2:
                found = [p for p in PLACES if fold(p["name"]).startswith(name)][:count]
                if found:
                    body["results"] = found
            return self.send_json(200, body)
        if path == "/v1/forecast":
            if "latitude" not in query or "longitude" not in query:
                return self.send_json(400, {"error": True, "reason": "Parameter 'latitude' and 'longitude' must have the same number of elements"})
            body = state.fixture("open-meteo-forecast.json")
            body["latitude"] = float(query["latitude"])
            body["longitude"] = float(query["longitude"])
            return self.send_json(200, body)
        self.send_json(404, {"error": True, "reason": "Not Found"})

    def openweathermap(self, path, query):
        state = self.server.state
        if query.get("appid") != state.owm_key:
            return self.error(401, True)
        if path == "/geo/1.0/direct":
            places = state.fixture("openweathermap-geo.json")
            name = fold(query.get("q", "").split(",")[0])
            limit = int(query.get("limit", "5"))
            return self.send_json(200, [p for p in places if fold(p["name"]).startswith(name)][:limit])
        if path == "/data/2.5/weather":
            return self.send_json(200, state.fixture("openweathermap-current.json"))
        if path == "/data/2.5/forecast":
            return self.send_json(200, state.fixture("openweathermap-forecast.json"))
        self.send_json(404, OWM_404)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--owm-key", default="test-key")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.state = State(args.fixtures, args.owm_key)
    stopping = threading.Event()

    def stop(signum, frame):
        if not stopping.is_set():
            stopping.set()
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A parent that spawns from a thread with signals blocked (Foundation's Process does) hands
    # that mask down: unblock, or SIGTERM would stay pending forever.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
