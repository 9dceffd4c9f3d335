#!/usr/bin/env python3
"""A DNS server for one name, whose answer a test changes while it runs.

Serves UDP on 127.0.0.1:53 (run it inside a network namespace the test made: port 53 needs
root, and the namespace's own resolv.conf points at it). For each query it reads ANSWER_FILE:
- an IPv4 address: A queries for NAME get it (TTL 0), AAAA queries an empty answer;
- "silent": the query is dropped, as a resolver that does not answer (the client waits for
  resolv.conf's timeout x attempts);
other names get NXDOMAIN. Prints "READY" once it listens; exits on SIGTERM or when its
parent process dies.

Usage: dns_server.py NAME ANSWER_FILE
"""
import os
import signal
import socket
import struct
import sys


def question_end(packet):
    """Offset just past the first question's QTYPE and QCLASS, and the name, lower case."""
    offset = 12
    labels = []
    while True:
        length = packet[offset]
        offset += 1
        if length == 0:
            break
        labels.append(packet[offset:offset + length].decode("ascii", "replace").lower())
        offset += length
    return offset + 4, ".".join(labels)


def answer(packet, name, answer_file):
    if len(packet) < 12:
        return None
    (query_id, flags, qdcount) = struct.unpack("!HHH", packet[:6])
    if qdcount != 1 or flags & 0x8000:
        return None
    end, asked = question_end(packet)
    qtype = struct.unpack("!H", packet[end - 4:end - 2])[0]
    with open(answer_file) as f:
        configured = f.read().strip()
    if configured == "silent":
        return None
    question = packet[12:end]
    rd = flags & 0x0100
    if asked != name.lower():
        return struct.pack("!HHHHHH", query_id, 0x8080 | rd | 3, 1, 0, 0, 0) + question
    records = b""
    count = 0
    if qtype == 1:
        records = struct.pack("!HHHIH", 0xC00C, 1, 1, 0, 4) + socket.inet_aton(configured)
        count = 1
    return struct.pack("!HHHHHH", query_id, 0x8080 | rd, 1, count, 0, 0) + question + records


def main():
    if len(sys.argv) != 3:
        print("usage: dns_server.py NAME ANSWER_FILE", file=sys.stderr)
        sys.exit(2)
    name, answer_file = sys.argv[1], sys.argv[2]
    # A parent that spawns from a thread with signals blocked (Foundation's Process does) hands
    # that mask down; SIGTERM would stay pending.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parent = os.getppid()
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 53))
    server.settimeout(1)
    print("READY", flush=True)
    while os.getppid() == parent:
        try:
            packet, peer = server.recvfrom(4096)
        except socket.timeout:
            continue
        try:
            reply = answer(packet, name, answer_file)
        except (IndexError, struct.error, OSError, UnicodeError) as error:
            print(f"dns_server: bad query from {peer}: {error}", file=sys.stderr, flush=True)
            continue
        if reply is not None:
            server.sendto(reply, peer)


if __name__ == "__main__":
    main()
