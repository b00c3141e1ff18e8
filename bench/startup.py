#!/usr/bin/env python3
"""Start to first PONG: a fresh latchd process vs redis-server, and an in-process ScopedServer.

For each run: pick a free port, start the server, then connect + PING in a tight loop until
"+PONG" arrives; the time from just before the spawn to the PONG is one sample. The server is
then stopped (SIGTERM, waited). Processes alternate (latchd, redis, latchd, ...) so that noise
hits both alike. The in-process number comes from bench/startup_inprocess (latch::testing).

    python3 bench/startup.py --latchd build-bench-release/server/latchd \
        --inprocess build-bench-release/bench/startup_inprocess [--runs 50]
"""
import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_pong(port, deadline):
    while time.perf_counter() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return True
        except OSError:
            pass
    return False


def one_run(argv_for_port):
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv_for_port(port), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    ok = first_pong(port, t0 + 10)
    elapsed = time.perf_counter() - t0
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    if not ok:
        raise RuntimeError(f"no PONG from {argv_for_port(port)[0]}")
    return elapsed * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latchd", required=True)
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--inprocess", help="bench/startup_inprocess binary")
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    servers = {
        "latchd": lambda p: [args.latchd, "--port", str(p), "--bind", "127.0.0.1",
                             "--loglevel", "warning"],
        "latchd (test mode)": lambda p: [args.latchd, "--port", str(p), "--bind", "127.0.0.1",
                                         "--loglevel", "warning", "--enable-test-commands",
                                         "yes", "--clock", "manual"],
        "redis-server": lambda p: [args.redis, "--port", str(p), "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no", "--loglevel", "warning"],
    }
    samples = {name: [] for name in servers}
    for _ in range(args.runs):
        for name, argv in servers.items():
            samples[name].append(one_run(argv))
    print(f"start to first PONG, {args.runs} runs each ({os.cpu_count()} CPUs)")
    print("| server | median ms | p10 ms | p90 ms |")
    print("|---|---|---|---|")
    for name, values in samples.items():
        q = statistics.quantiles(values, n=10)
        print(f"| {name} | {statistics.median(values):.1f} | {q[0]:.1f} | {q[-1]:.1f} |")
    if args.inprocess:
        out = subprocess.run([args.inprocess, str(args.runs)], check=True, capture_output=True,
                             text=True).stdout.strip()
        print(f"in-process ScopedServer: {out}")


if __name__ == "__main__":
    main()
