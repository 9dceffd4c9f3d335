#!/usr/bin/env python3
"""Publishes bus events per docs/PROTOCOL.md.

    bus_pub.py --kernel tcp://127.0.0.1:PORT --topic T --count N --payload JSON
               [--retain] [--reset] [--source NAME] [--instance ID] [--seq-start S]
               [--index-field NAME] [--interval-ms MS] [--wait-subscriber] [--no-wait]
               [--timeout S] [--keys DIR [--identity NAME]]

Each event is [topic][meta][payload]: meta version 1, flags (retained with --retain, reset with
--reset), seq S..S+N-1 (S = 1, or with --retain the kernel's retained seq + 1 read from
bus.retained, so a state topic's sequence continues; --seq-start overrides), timestamp in
microseconds, source (default "interop"), instance, content type application/json.

The PUB slow-joiner problem: a PUB drops everything until the kernel's XSUB subscription has
reached it over the new connection. So bus_pub publishes through an XPUB socket instead (same
wire behaviour towards the kernel's XSUB) and waits until the kernel's subscribe-all message
([0x01], empty prefix) arrives on it: from then on nothing it sends is dropped (XPUB_NODROP:
a full queue blocks, bounded by --timeout, instead of dropping). --no-wait uses a plain PUB and
publishes at once (for loss tests).
--wait-subscriber also proves the path end to end and waits for a reader: a SUB on the
kernel's XPUB (PORT+2) subscribes to `interop.probe.<random>` and probe events are published on
that topic every 50 ms until one comes back through the kernel; then bus_pub polls bus.stats
until a subscription whose prefix covers the topic is listed (some subscriber will receive it).
Start subscribers first and wait for their own confirmation (bus_sub.py prints
{"subscribed": true}) when every event must arrive.

Security (a kernel started with --keys): --keys DIR (default $BUS_KEYS) and --identity NAME
(default: --source) put CURVE on every socket (DIR/NAME.key_secret, DIR/kernel.key, read with
zmq.auth.load_certificate). The built-in policy lets an identity publish only under its own
name (NAME.>): the kernel silently drops (and counts) other events. Probes then use
bus.probe.interop-<random>, which the kernel opens to every admitted identity.

stdout: {"published": N, "topic": T, "first_seq": a, "last_seq": b, "probes": k, "instance": I}
Exit status: 0 ok, 1 failure, 2 bad arguments, 3 timeout (no kernel subscription, probe or
subscriber within --timeout).
"""
import json
import os
import sys
import time

sys.dont_write_bytecode = True
import zmq  # noqa: E402

import buswire as bw  # noqa: E402


def main():
    parser = bw.ArgumentParser(description=__doc__, formatter_class=bw.argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", default=os.environ.get("BUS_KERNEL", "tcp://127.0.0.1:5555"))
    parser.add_argument("--topic", required=True)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--payload", default="{}", help="JSON payload of every event (default {})")
    parser.add_argument("--index-field", metavar="NAME",
                        help="set payload[NAME] to the event's index (0-based); payload must be an object")
    parser.add_argument("--retain", action="store_true", help="set the retained flag")
    parser.add_argument("--reset", action="store_true", help="set the reset flag (replace whatever seq)")
    parser.add_argument("--source", default="interop")
    parser.add_argument("--instance", default=None)
    parser.add_argument("--seq-start", type=int, default=None, help="first sequence number")
    parser.add_argument("--correlation-id", default="")
    parser.add_argument("--causation-id", default="")
    parser.add_argument("--interval-ms", type=float, default=0.0, help="pause between events")
    parser.add_argument("--wait-subscriber", action="store_true",
                        help="probe the path through the kernel, then wait until a subscription covers the topic")
    parser.add_argument("--no-wait", action="store_true",
                        help="plain PUB, publish at once without waiting for the kernel's subscription")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds for every wait (default 10)")
    bw.add_security_arguments(parser, "CURVE: the identity whose key pair to use (default: --source)")
    args = parser.parse_args()
    credentials = bw.load_credentials(args.keys, args.identity or args.source)

    bw.validate_topic(args.topic)
    if args.count < 0:
        parser.error("--count must be >= 0")
    if args.seq_start is not None and args.seq_start < 1:
        parser.error("--seq-start must be >= 1")
    try:
        payload = json.loads(args.payload)
    except ValueError as error:
        parser.error("--payload is not JSON: %s" % error)
    if args.index_field and not isinstance(payload, dict):
        parser.error("--index-field needs an object --payload")
    requests, events_in, events_out = bw.endpoints(args.kernel)
    instance = args.instance or bw.default_instance(args.source)
    deadline = bw.Deadline(args.timeout)

    ctx = zmq.Context()
    if args.no_wait:
        pub = bw.tune(ctx.socket(zmq.PUB), hwm=max(10000, args.count + 1000), linger_ms=2000, credentials=credentials)
    else:
        pub = bw.tune(ctx.socket(zmq.XPUB), hwm=max(10000, args.count + 1000), linger_ms=2000, credentials=credentials)
        pub.setsockopt(zmq.XPUB_NODROP, 1)
        pub.setsockopt(zmq.SNDTIMEO, max(1, int(args.timeout * 1000)))
    sub = bw.tune(ctx.socket(zmq.SUB), linger_ms=0, credentials=credentials)
    try:
        pub.connect(events_in)
        if not args.no_wait:
            bw.wait_kernel_subscription(pub, deadline)
        probes = 0
        if args.wait_subscriber:
            probe = bw.probe_topic(secure=credentials is not None)
            sub.connect(events_out)
            sub.setsockopt(zmq.SUBSCRIBE, probe.encode())
            probes = bw.probe(pub, sub, probe, args.source, instance, deadline)
            wait_for_subscriber(ctx, requests, args.topic, deadline, credentials)
        sub.close(0)

        first = args.seq_start
        if first is None:
            first = 1
            if args.retain and not args.reset:
                status, value = bw.kernel_call(ctx, requests, "retained", {"topic": args.topic},
                                               max(0.5, deadline.remaining()), credentials)
                if status == 200:
                    first = value["seq"] + 1
                elif status != 404:
                    raise bw.Failure("bus.retained answered %d: %s" % (status, value))
        flags = (bw.FLAG_RETAINED if args.retain else 0) | (bw.FLAG_RESET if args.reset else 0)
        for i in range(args.count):
            if args.index_field:
                payload[args.index_field] = i
            body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
            meta = bw.encode_meta(flags, first + i, args.source, instance,
                                  correlation_id=args.correlation_id, causation_id=args.causation_id)
            try:
                pub.send_multipart([args.topic.encode(), meta, body])
            except zmq.Again:
                raise bw.Failure("the kernel took no event for %.1f s (queue full)" % args.timeout, bw.EXIT_TIMEOUT)
            if args.interval_ms > 0 and i + 1 < args.count:
                time.sleep(args.interval_ms / 1000)
        pub.close()  # linger 2 s: queued events are flushed before the context ends
        bw.emit({"published": args.count, "topic": args.topic, "first_seq": first if args.count else None,
                 "last_seq": first + args.count - 1 if args.count else None, "probes": probes,
                 "instance": instance})
        return bw.EXIT_OK
    finally:
        pub.close()
        sub.close(0)
        ctx.term()


def wait_for_subscriber(ctx, requests, topic, deadline, credentials=None):
    """Polls bus.stats until a subscription prefix covers `topic`."""
    wanted = topic.encode()
    while True:
        status, stats = bw.kernel_call(ctx, requests, "stats", {}, max(0.5, deadline.remaining()), credentials)
        if status != 200:
            raise bw.Failure("bus.stats answered %d" % status)
        for entry in stats.get("subscriptions", []):
            if entry.get("count", 0) > 0 and wanted.startswith(entry["prefix"].encode()):
                return
        if deadline.expired():
            raise bw.Failure("no subscriber for %r within the timeout" % topic, bw.EXIT_TIMEOUT)
        time.sleep(0.05)


if __name__ == "__main__":
    bw.run_main(main)
