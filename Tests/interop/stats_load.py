#!/usr/bin/env python3
"""Loads a running kernel with subscriptions and retained topics, then times bus.stats and
bus.retained {"pattern": ">"} as a client sees them (docs/PERFORMANCE.md, "Kernel requests").

usage: stats_load.py --kernel tcp://127.0.0.1:PORT [--subscriptions 30000] [--size 24]
                     [--topics 2000] [--payload-bytes 200] [--calls 20] [--timeout 60]
                     [--keys DIR --identity NAME]

One SUB subscribes to --subscriptions distinct prefixes of --size bytes (as sub_flood.py); an
XPUB publishes --topics retained topics `load.t<n>`, each with a JSON payload of about
--payload-bytes. Once bus.stats shows them all, each request is sent --calls times, one after
another. Prints one JSON line:
    {"subscriptions", "topics", "ping": {"p50_ms", "max_ms", "bytes"},
     "stats": {"p50_ms", "max_ms", "bytes", "walked"}, "stats_one_topic": {...} (limit 1),
     "retained": {"p50_ms", "max_ms", "bytes", "values", "next"}}
The kernel needs --max-subscriptions-per-owner above --subscriptions.
"""
import json
import os
import statistics
import time

import zmq

import buswire as bw


def call(ctx, requests, method, params, timeout_s, credentials):
    """bus.<method> on a fresh DEALER: (milliseconds, payload bytes, payload object)."""
    sock = bw.tune(ctx.socket(zmq.DEALER), linger_ms=0, credentials=credentials)
    try:
        sock.connect(requests)
        meta = {"id": "load-%d" % time.monotonic_ns(), "timeout_ms": int(timeout_s * 1000), "caller": "interop"}
        started = time.perf_counter()
        sock.send_multipart([b"", b"MDPC01", b"bus", method.encode(), json.dumps(meta).encode(), json.dumps(params).encode()])
        if not sock.poll(int(timeout_s * 1000)):
            raise bw.Failure("no reply from bus.%s within %.1f s" % (method, timeout_s), bw.EXIT_TIMEOUT)
        frames = sock.recv_multipart()
        elapsed = (time.perf_counter() - started) * 1000
    finally:
        sock.close(0)
    if len(frames) < 6 or frames[3] != b"200":
        raise bw.Failure("bus.%s answered %r" % (method, frames[3:4]))
    return elapsed, len(frames[5]), json.loads(frames[5])


def summary(samples):
    times = [s[0] for s in samples]
    return {"p50_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2), "bytes": samples[-1][1]}


def main():
    parser = bw.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", default=os.environ.get("BUS_KERNEL", "tcp://127.0.0.1:5555"))
    parser.add_argument("--subscriptions", type=int, default=30000)
    parser.add_argument("--size", type=int, default=24)
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--payload-bytes", type=int, default=200)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=60.0)
    bw.add_security_arguments(parser, "CURVE identity of this program")
    args = parser.parse_args()
    credentials = bw.load_credentials(args.keys, args.identity)
    requests, events_in, events_out = bw.endpoints(args.kernel)
    deadline = bw.Deadline(args.timeout)
    ctx = zmq.Context()
    sub = bw.tune(ctx.socket(zmq.SUB), hwm=max(10000, args.subscriptions + 100), linger_ms=0, credentials=credentials)
    pub = bw.tune(ctx.socket(zmq.XPUB), hwm=max(10000, args.topics + 100), linger_ms=2000, credentials=credentials)
    try:
        sub.connect(events_out)
        tag = "load%d." % os.getpid()
        for i in range(args.subscriptions):
            head = ("%s%06d." % (tag, i)).encode()
            sub.setsockopt(zmq.SUBSCRIBE, head + b"x" * max(0, args.size - len(head)))
        pub.setsockopt(zmq.XPUB_NODROP, 1)
        pub.connect(events_in)
        bw.wait_kernel_subscription(pub, deadline)
        filler = "x" * max(0, args.payload_bytes - 20)
        for i in range(args.topics):
            meta = bw.encode_meta(bw.FLAG_RETAINED | bw.FLAG_RESET, 1, "load", "load-1")
            pub.send_multipart([("load.t%06d" % i).encode(), meta, json.dumps({"n": i, "fill": filler}).encode()])
        while True:
            _, _, stats = call(ctx, requests, "stats", {"limit": 1}, 10, credentials)
            if stats["subscribing"]["live"] >= args.subscriptions and stats["events"]["retained_topics"] >= args.topics:
                break
            if deadline.expired():
                raise bw.Failure("the kernel did not take every subscription and topic in time: %s" % stats["subscribing"], bw.EXIT_TIMEOUT)
            time.sleep(0.2)
        stats = [call(ctx, requests, "stats", {}, 10, credentials) for _ in range(args.calls)]
        small = [call(ctx, requests, "stats", {"limit": 1}, 10, credentials) for _ in range(args.calls)]
        ping = [call(ctx, requests, "ping", {}, 10, credentials) for _ in range(args.calls)]
        retained = [call(ctx, requests, "retained", {"pattern": ">"}, 10, credentials) for _ in range(args.calls)]
        last_stats, last_retained = stats[-1][2], retained[-1][2]
        bw.emit({"subscriptions": args.subscriptions, "topics": args.topics,
                 "ping": summary(ping), "stats": dict(summary(stats), walked=last_stats.get("walked")),
                 "stats_one_topic": summary(small),
                 "retained": dict(summary(retained), values=len(last_retained["values"]), next=last_retained.get("next"))})
        return bw.EXIT_OK
    finally:
        sub.close(0)
        pub.close(0)
        ctx.term()


if __name__ == "__main__":
    bw.run_main(main)
