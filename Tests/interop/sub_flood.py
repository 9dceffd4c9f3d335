#!/usr/bin/env python3
"""A hostile subscriber for the kernel-hardening tests: one SUB socket on events-out that
subscribes to COUNT distinct prefixes of SIZE bytes each, then holds the connection.

usage: sub_flood.py --kernel tcp://127.0.0.1:PORT --count N --size BYTES [--hold SECONDS]
                    [--keys DIR --identity NAME]
Prints {"subscribed": N, "size": BYTES} once every subscription was handed to libzmq, then
{"closed": true} when it leaves after --hold seconds (or when its parent dies).
"""
import os
import time

import zmq

import buswire


def main():
    parser = buswire.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", default=os.environ.get("BUS_KERNEL", "tcp://127.0.0.1:5555"))
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--size", type=int, required=True, help="bytes per prefix (at least 12)")
    parser.add_argument("--hold", type=float, default=3.0, help="seconds to keep the connection open")
    buswire.add_security_arguments(parser, "CURVE identity of this subscriber")
    args = parser.parse_args()
    if args.size < 12:
        raise buswire.Failure("--size must be at least 12", buswire.EXIT_USAGE)
    credentials = buswire.load_credentials(args.keys, args.identity)
    _, _, events_out = buswire.endpoints(args.kernel)
    parent = os.getppid()
    ctx = zmq.Context()
    # A SUB queues its subscriptions like messages: past its send high-water mark libzmq drops them.
    sub = buswire.tune(ctx.socket(zmq.SUB), hwm=max(10000, args.count + 100), linger_ms=0, credentials=credentials)
    sub.connect(events_out)
    tag = "flood%d." % os.getpid()
    for i in range(args.count):
        head = ("%s%06d." % (tag, i)).encode()
        sub.setsockopt(zmq.SUBSCRIBE, head + b"x" * max(0, args.size - len(head)))
    buswire.emit({"subscribed": args.count, "size": args.size})
    deadline = buswire.Deadline(args.hold)
    while not deadline.expired() and not buswire.orphaned(parent):
        if sub.poll(min(100, deadline.remaining_ms())):
            sub.recv_multipart()
    sub.close(0)
    ctx.term()
    buswire.emit({"closed": True})
    return 0


if __name__ == "__main__":
    buswire.run_main(main)
