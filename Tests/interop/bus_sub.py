#!/usr/bin/env python3
"""Subscribes to bus events per docs/PROTOCOL.md and prints them as JSON lines.

    bus_sub.py --kernel tcp://127.0.0.1:PORT --pattern 'testsvc.>' [--pattern P ...]
               [--count N] [--timeout S] [--skip-snapshots] [--show-probes]
               [--keys DIR --identity NAME]

Connects a SUB to the kernel's XPUB (PORT+2), subscribes to each pattern's wire prefix and
filters topics exactly (NATS wildcards: '*' one token, '>' the rest). To know the
subscription is live it also subscribes to its own `interop.probe.<random>` topic and
publishes probes through a PUB on the kernel's XSUB (PORT+1) until one comes back: the
subscriptions were made in order on one connection, so by then the kernel's XPUB has them.

stdout (one JSON object per line, flushed):
    {"subscribed": true, "patterns": [...], "probes": n}      first, once the path is live
    {"topic","seq","source","instance","flags","snapshot","retained","repeated","time_us",
     "payload","content_type","correlation_id","causation_id","gap","duplicate"}
                                                              one per matching event; the
                                                              kernel's repeats of an event
                                                              already seen are skipped
    {"malformed": "reason"}                                   an event that breaks the format

Security (a kernel started with --keys): --keys DIR (default $BUS_KEYS) and --identity NAME put
CURVE on both sockets (DIR/NAME.key_secret, DIR/kernel.key, read with zmq.auth.load_certificate);
the probe topic is then bus.probe.interop-<random>, which the kernel lets every admitted
identity publish (interop.probe.* would be refused outside the identity's own namespace).

Events received before the probe came back (e.g. retained snapshots) are printed right after
the "subscribed" line. Probe topics (`interop.probe.*`, and `bus.probe.*` of Swift clients
confirming their subscriptions) are hidden unless --show-probes.
`gap` is how many sequence numbers were skipped since the previous event of the same topic
and publisher instance (0 for the first, for snapshots and for replays); `duplicate` is true
when the seq is not higher than one already seen for them (e.g. a snapshot the kernel sent
because another subscriber subscribed). Every event is printed, duplicates included.
Payloads that are not JSON are printed as "payload": null, "payload_b64": "...".

Exit status: 0 after --count events (or at --timeout when no --count is given),
3 at --timeout before --count events or before the subscription was confirmed,
1 on other failures (also when the parent process dies), 2 on bad arguments.
"""
import base64
import json
import os
import sys

sys.dont_write_bytecode = True
import zmq  # noqa: E402

import buswire as bw  # noqa: E402


def main():
    parser = bw.ArgumentParser(description=__doc__, formatter_class=bw.argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", default=os.environ.get("BUS_KERNEL", "tcp://127.0.0.1:5555"))
    parser.add_argument("--pattern", action="append", default=[], help="topic pattern (repeatable; default '>')")
    parser.add_argument("--count", type=int, default=None, help="exit 0 after this many events")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before giving up (default 10)")
    parser.add_argument("--skip-snapshots", action="store_true", help="drop events with the snapshot flag")
    parser.add_argument("--show-probes", action="store_true", help="also print interop.probe.* and bus.probe.* events")
    bw.add_security_arguments(parser, "CURVE: the identity whose key pair to use (needed with --keys)")
    args = parser.parse_args()
    credentials = bw.load_credentials(args.keys, args.identity)
    if args.count is not None and args.count < 0:
        parser.error("--count must be >= 0")
    patterns = [bw.Pattern(p) for p in (args.pattern or [">"])]
    _, events_in, events_out = bw.endpoints(args.kernel)
    deadline = bw.Deadline(args.timeout)
    ppid = os.getppid()

    ctx = zmq.Context()
    sub = bw.tune(ctx.socket(zmq.SUB), hwm=100000, linger_ms=0, credentials=credentials)
    pub = bw.tune(ctx.socket(zmq.PUB), linger_ms=0, credentials=credentials)
    try:
        return run(args, patterns, events_in, events_out, deadline, ppid, sub, pub, secure=credentials is not None)
    finally:
        sub.close(0)
        pub.close(0)
        ctx.term()


def run(args, patterns, events_in, events_out, deadline, ppid, sub, pub, secure=False):
    probe = bw.probe_topic(secure)
    instance = bw.default_instance("interop-sub")
    sub.connect(events_out)
    prefixes = {p.wire_prefix for p in patterns}
    # One subscription per prefix, none covered by a shorter one: each SUBSCRIBE makes the kernel
    # re-send the retained values under it, so overlapping ones would duplicate snapshots.
    for prefix in sorted(x for x in prefixes if not any(x != y and x.startswith(y) for y in prefixes)):
        sub.setsockopt(zmq.SUBSCRIBE, prefix)
    sub.setsockopt(zmq.SUBSCRIBE, probe.encode())  # last: when it is live, the others are
    pub.connect(events_in)

    early = []
    sent = bw.probe(pub, sub, probe, "interop-sub", instance, deadline, on_other=early.append)
    pub.close(0)
    bw.emit({"subscribed": True, "patterns": [p.text for p in patterns], "probes": sent})

    state = {"printed": 0, "last": {}}
    done = lambda: args.count is not None and state["printed"] >= args.count  # noqa: E731
    for frames in early:
        handle(frames, args, patterns, probe, state)
        if done():
            return bw.EXIT_OK
    if done():
        return bw.EXIT_OK
    while not deadline.expired():
        if bw.orphaned(ppid):
            raise bw.Failure("parent process is gone")
        if not sub.poll(deadline.remaining_ms(cap_ms=500)):
            continue
        while sub.poll(0):
            handle(sub.recv_multipart(), args, patterns, probe, state)
            if done():
                return bw.EXIT_OK
    if args.count is None:
        return bw.EXIT_OK
    raise bw.Failure("timeout after %.1f s with %d of %d events" % (args.timeout, state["printed"], args.count),
                     bw.EXIT_TIMEOUT)


def handle(frames, args, patterns, probe, state):
    if len(frames) != 3:
        bw.emit({"malformed": "event has %d frames, expected [topic][meta][payload]" % len(frames)})
        return
    try:
        topic = frames[0].decode("utf-8")
    except UnicodeDecodeError:
        bw.emit({"malformed": "topic is not UTF-8"})
        return
    if topic == probe or (topic.startswith(bw.PROBE_PREFIXES) and not args.show_probes):
        return
    if not any(p.matches(topic) for p in patterns):
        return  # the wire prefix is wider than the pattern
    try:
        meta = bw.decode_meta(frames[1])
    except ValueError as error:
        bw.emit({"malformed": "%s: %s" % (topic, error)})
        return
    snapshot = bool(meta["flags"] & bw.FLAG_SNAPSHOT)
    if snapshot and args.skip_snapshots:
        return
    key = (topic, meta["instance"])
    previous = state["last"].get(key)
    gap = 0
    duplicate = previous is not None and meta["seq"] <= previous
    if duplicate and meta["flags"] & bw.FLAG_REPEATED:
        return  # the kernel's repeat of an event this subscriber has (docs/PROTOCOL.md)
    if not duplicate:
        if previous is not None and not snapshot and not meta["flags"] & bw.FLAG_REPLAYED:
            gap = meta["seq"] - previous - 1
        state["last"][key] = meta["seq"]
    event = {
        "topic": topic, "seq": meta["seq"], "source": meta["source"], "instance": meta["instance"],
        "flags": meta["flags"], "snapshot": snapshot, "retained": bool(meta["flags"] & bw.FLAG_RETAINED),
        "repeated": bool(meta["flags"] & bw.FLAG_REPEATED),
        "time_us": meta["time_us"], "content_type": meta["content_type"],
        "correlation_id": meta["correlation_id"], "causation_id": meta["causation_id"], "gap": gap, "duplicate": duplicate,
    }
    try:
        event["payload"] = json.loads(frames[2]) if frames[2] else None
    except ValueError:
        event["payload"] = None
        event["payload_b64"] = base64.b64encode(frames[2]).decode()
    bw.emit(event)
    state["printed"] += 1


if __name__ == "__main__":
    bw.run_main(main)
