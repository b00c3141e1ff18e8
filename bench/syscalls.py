#!/usr/bin/env python3
"""System calls per request of a server, per io-engine (issue 26, goal 3).

Starts the server (latchd --io-engine E --io-threads 1, or null_server --engine E) on a free
loopback port, attaches `strace -c -f` to it, runs redis-benchmark (SET NX PX, -c/-P as given)
and prints the calls per request, by name. strace slows the server down: the counts are what
this measures, not the speed.

    python3 bench/syscalls.py --server build-rel/server/latchd --engine uring
    python3 bench/syscalls.py --server build-rel/bench/null_server --null --engine epoll
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchkit.procs import free_port, wait_port  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--null", action="store_true", help="the server is null_server")
    ap.add_argument("--engine", choices=["epoll", "uring"], default="epoll")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipeline", type=int, default=1)
    ap.add_argument("--requests", type=int, default=20000)
    args = ap.parse_args()
    port = free_port()
    if args.null:
        argv = [args.server, "--port", str(port), "--engine", args.engine]
    else:
        argv = [args.server, "--port", str(port), "--bind", "127.0.0.1", "--io-threads", "1",
                "--io-engine", args.engine, "--save", ""]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = tempfile.NamedTemporaryFile(prefix="latch-strace-", suffix=".txt", delete=False)
    out.close()
    try:
        # benchkit's wait gives up at once if the server exits (it asks alive()).
        if not wait_port(port, types.SimpleNamespace(alive=lambda: server.poll() is None), 10):
            sys.exit("the server did not listen")
        strace = subprocess.Popen(["strace", "-c", "-f", "-o", out.name, "-p", str(server.pid)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # strace attaches to every thread before the load starts
        subprocess.run(["redis-benchmark", "-p", str(port), "-c", str(args.clients), "-P",
                        str(args.pipeline), "-n", str(args.requests), "-r", "100000", "-q",
                        "SET", "lock:__rand_int__", "tok", "NX", "PX", "30000"],
                       check=True, stdout=subprocess.DEVNULL, timeout=600)
        strace.send_signal(2)  # SIGINT: detach and write the summary
        strace.wait(timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=10)
    with open(out.name) as f:
        text = f.read()
    os.unlink(out.name)
    rows = []
    for line in text.splitlines():
        m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(\d+)?\s*(\w+)$", line)
        if m and m.group(3) != "total":
            rows.append((int(m.group(1)), m.group(3)))
    # The benchmark's own connections (plus CONFIG GET at its start) are the requests.
    total = sum(n for n, _ in rows)
    print("%s --engine %s, c%d P%d, %d requests: %.2f system calls per request" % (
        os.path.basename(args.server), args.engine, args.clients, args.pipeline, args.requests,
        total / args.requests))
    for n, name in sorted(rows, reverse=True):
        if n / args.requests >= 0.005:
            print("  %-16s %.3f" % (name, n / args.requests))


if __name__ == "__main__":
    main()
