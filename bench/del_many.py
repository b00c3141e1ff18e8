#!/usr/bin/env python3
"""One DEL (or UNLINK / EXISTS) of many keys: end-to-end time, latchd vs redis-server.

For each server: start it on a free port, set keys k0..k{N-1} (pipelined SETs),
build the request `DEL k0 k1 ... k{N-1}` in memory (~13 MB for a million keys), then time
from the first byte sent to the reply received, and the server's CPU time (utime+stime from
/proc) over the same window. The reply must count every key. --dup names every key twice
(the reply must still count each key once, as Redis does).

    python3 bench/del_many.py --latchd build/rel/server/latchd [--keys 1000000] [--rounds 3]
        [--command DEL|UNLINK|EXISTS] [--dup]
"""
import argparse
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Server, proc_cpu_seconds  # noqa: E402


def request(command, keys, dup):
    names = [b"k%d" % i for i in range(keys)]
    if dup:
        names = names + names
    parts = [b"*%d\r\n$%d\r\n%s\r\n" % (len(names) + 1, len(command), command.encode())]
    parts += [b"$%d\r\n%s\r\n" % (len(n), n) for n in names]
    return b"".join(parts)


def timed_call(port, payload):
    """Sends payload, reads one integer reply; returns (reply, seconds)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=120)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    start = time.monotonic()
    s.sendall(payload)
    buf = b""
    while not buf.endswith(b"\r\n"):
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    elapsed = time.monotonic() - start
    s.close()
    return buf.strip(), elapsed


def fill(port, keys):
    """SET k<i> v for every key, pipelined in batches of 10,000."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    for base in range(0, keys, 10000):
        n = min(10000, keys - base)
        s.sendall(b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$1\r\nv\r\n" % (len(b"%d" % i) + 1, i)
                           for i in range(base, base + n)))
        want, got = 5 * n, b""
        while len(got) < want:
            chunk = s.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed during fill")
            got += chunk
        if got != b"+OK\r\n" * n:
            raise RuntimeError("fill failed: %r" % got[:80])
    s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--latchd", required=True)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--command", default="DEL")
    ap.add_argument("--dup", action="store_true")
    ap.add_argument("--only", default="latch,redis")
    args = ap.parse_args()
    payload = request(args.command, args.keys, args.dup)
    argvs = {
        "latch": lambda p: [args.latchd, "--port", str(p), "--bind", "127.0.0.1"],
        "redis": lambda p: ["redis-server", "--port", str(p), "--bind", "127.0.0.1", "--save", "",
                            "--appendonly", "no"],
    }
    print("%s of %d keys%s, request %.1f MB" % (args.command, args.keys,
                                               " (each named twice)" if args.dup else "",
                                               len(payload) / 1e6))
    print("| server | round | reply | end to end s | server CPU s |")
    print("|---|---:|---|---:|---:|")
    for r in range(args.rounds):
        for name in args.only.split(","):
            srv = Server(name, argvs[name], "/tmp")
            srv.start()
            try:
                fill(srv.port, args.keys)
                cpu0 = proc_cpu_seconds(srv.proc.pid)
                reply, secs = timed_call(srv.port, payload)
                cpu = proc_cpu_seconds(srv.proc.pid) - cpu0
                print("| %s | %d | %s | %.3f | %.3f |" % (name, r + 1, reply.decode(), secs, cpu),
                      flush=True)
            finally:
                srv.stop()


if __name__ == "__main__":
    main()
