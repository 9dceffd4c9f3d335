#!/usr/bin/env python3
"""A port that accepts TCP connections and closes them at once (a crashed or foreign process
where the kernel should be), to count how often bus clients try to connect.

usage: accept_close.py --port PORT [--ports N] [--seconds S]
Listens on 127.0.0.1 PORT .. PORT+N-1 (N default 3: the kernel's three endpoints), prints
{"listening": [ports]} once bound, then after S seconds (or when its parent dies)
{"accepted": total, "seconds": S} and exits.
"""
import os
import selectors
import socket
import time

import buswire


def main():
    parser = buswire.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ports", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    parent = os.getppid()
    selector = selectors.DefaultSelector()
    listeners = []
    for port in range(args.port, args.port + args.ports):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        listener.setblocking(False)
        selector.register(listener, selectors.EVENT_READ)
        listeners.append(listener)
    buswire.emit({"listening": list(range(args.port, args.port + args.ports))})
    accepted = 0
    started = time.monotonic()
    deadline = buswire.Deadline(args.seconds)
    while not deadline.expired() and not buswire.orphaned(parent):
        for key, _ in selector.select(timeout=min(0.1, deadline.remaining())):
            try:
                connection, _ = key.fileobj.accept()
            except BlockingIOError:
                continue
            accepted += 1
            connection.close()
    for listener in listeners:
        listener.close()
    buswire.emit({"accepted": accepted, "seconds": round(time.monotonic() - started, 3)})
    return 0


if __name__ == "__main__":
    buswire.run_main(main)
