#!/usr/bin/env python3
"""Lock-server connections opened in a burst, Redis vs latchd: what a freshly started demo
instance's first stampede paid (bench/README.md, "The 3-instance stampede").

    python3 bench/connect_burst.py [--latchd build-load/server/latchd] [--trials 30]

Each trial: 12 connections at once (3 instances x 4 pooled connections), each sends HELLO 3,
COMMAND INFO (the latch client's handshake), then 8 pipelined lock calls on one key (SET NX PX
on Redis, LOCK.ACQUIRE on latchd); the time until the last connection has its first reply.
"cold" opens the connections inside the timed part, "warm" before it. Prints the median and
p90 over the trials. Standard library only; every wait is bounded.
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchkit.procs import free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def encode(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for cmd in (encode("HELLO", 3, "SETNAME", "burst"),
                encode("COMMAND", "INFO", "LOCK.ACQUIRE", "DELEX", "EVALSHA")):
        s.sendall(cmd)
        s.recv(65536)
    return s


def burst(port, latch, warm, n=12, k=8):
    barrier = threading.Barrier(n + 1, timeout=30)
    took = []

    def one(i):
        s = connect(port) if warm else None
        barrier.wait()
        t0 = time.perf_counter()
        if s is None:
            s = connect(port)
        s.sendall(b"".join(
            encode("LOCK.ACQUIRE", "seat", "o%d-%d" % (i, j), 5000) if latch
            else encode("SET", "seat", "o%d-%d" % (i, j), "NX", "PX", 5000) for j in range(k)))
        s.recv(65536)
        took.append(time.perf_counter() - t0)
        s.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    for t in threads:
        t.join(timeout=30)
    return 1000 * max(took)


def start(argv, port):
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    sys.exit("%s did not start" % argv[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--latchd", default=os.path.join(ROOT, "build-load", "server", "latchd"))
    ap.add_argument("--latchd-flags", default="", help="e.g. '--io-threads 1'")
    ap.add_argument("--trials", type=int, default=30)
    args = ap.parse_args()
    rp, lp = free_port(), free_port()
    procs = [start(["redis-server", "--port", str(rp), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no"], rp),
             start([args.latchd, "--port", str(lp), "--bind", "127.0.0.1"]
                   + args.latchd_flags.split(), lp)]
    try:
        with open("/proc/loadavg") as f:
            print("1-min load average %s" % f.read().split()[0])
        for warm in (False, True):
            res = {"Redis": [], "latchd": []}
            for _ in range(args.trials):
                res["Redis"].append(burst(rp, False, warm))
                res["latchd"].append(burst(lp, True, warm))
            for name, v in res.items():
                v.sort()
                print("%-6s 12 %s connections: median %.2f ms, p90 %.2f ms" % (
                    name, "warm" if warm else "cold", statistics.median(v),
                    v[int(0.9 * (len(v) - 1))]))
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)


if __name__ == "__main__":
    main()
