#!/usr/bin/env python3
"""Server instructions per request: a load-robust measure of a latchd's CPU cost.

On a shared machine throughput and CPU time move by 30 % between identical runs; the number
of instructions the server executes per request barely moves (other processes do not change
what latchd executes). This machine is a VM without a PMU (`perf stat -e instructions`
answers "not supported"), so the count comes from valgrind's callgrind: for each workload a
fresh latchd (--io-threads 1) runs under callgrind, is prefilled, its counters are zeroed
(`callgrind_control -z`) right before the measured load generator run and dumped
(`callgrind_control -d`) right after, and the dump's total Ir (instructions executed, user
space, every thread) is divided by the request count. The dumps are kept
(/tmp/latch-instr/<workload>.<binary tag>): `callgrind_annotate` shows where they go.
Under callgrind the server is ~50x slower, so pipelines are served in larger batches than
natively: compare binaries with this script only, not with native CPU time.

    python3 bench/instr_per_request.py --latchd A/server/latchd --latchd B/server/latchd \
        [--loadgen build/bench/latch_loadgen] [--rounds 1] [--filter GET] [--out DIR]

--out (default /tmp/latch-instr) keeps two engineers' concurrent runs apart.
--server-args "..." adds latchd options, e.g. "--appendonly yes --appendfsync everysec" (the
journal goes into a fresh directory under --out), to count what the journal costs.

Prints one row per workload and binary: instructions per request.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Resp, Server, TOKEN, UNLOCK_SCRIPT  # noqa: E402

N_RB = 200000    # redis-benchmark requests
N_RB_P1 = 50000  # redis-benchmark requests without pipelining (a round trip each)
N_LG = 100000    # latch_loadgen releases (each releases a prefilled lock)


OUT = "/tmp/latch-instr"


def callgrind(pid, flag):
    subprocess.run(["callgrind_control", flag, str(pid)], check=True, capture_output=True,
                   timeout=60)


def total_ir(path):
    """The summed Ir of every dump file of `path` (one per thread)."""
    total = 0
    for f in os.listdir(OUT):
        if f.startswith(os.path.basename(path) + ".1-"):
            with open(os.path.join(OUT, f)) as fh:
                for line in fh:
                    if line.startswith("summary:") or line.startswith("totals:"):
                        total += int(line.split()[1])
                        break
    return total


def loadgen(args, port, **opts):
    argv = [args.loadgen, "--port", str(port)]
    for k, v in opts.items():
        argv += ["--" + k.replace("_", "-"), str(v)]
    subprocess.run(argv, check=True, capture_output=True, timeout=300)


def redis_benchmark(port, n, command, pipeline=16):
    subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", "50",
                    "-P", str(pipeline),
                    "-n", str(n), "-r", "100000", "-q"] + command.split(),
                   check=True, capture_output=True, timeout=300)


def workloads(args):
    held = "SET lock:{i} %s PX 600000" % TOKEN

    def prefill(srv, template, count):
        loadgen(args, srv.port, mode="pipeline", clients=4, pipeline=128, requests=count,
                command=template, duration_ms=120000)

    def acquire(srv):
        # PX 3000000, not run.py's 30000: under callgrind the run outlasts 30 s, and keys
        # expiring during it would add active-expiry work that depends on the run's speed.
        redis_benchmark(srv.port, N_RB, "SET lock:__rand_int__ %s NX PX 3000000" % TOKEN)
        return N_RB

    def acquire_p1(srv):
        # One request per read and per write: the network path's share of a request.
        redis_benchmark(srv.port, N_RB_P1, "SET lock:__rand_int__ %s NX PX 3000000" % TOKEN,
                        pipeline=1)
        return N_RB_P1

    def get_prep(srv):
        prefill(srv, held, 100000)

    def get(srv):
        redis_benchmark(srv.port, N_RB, "GET lock:__rand_int__")
        return N_RB

    def release(template):
        def run(srv):
            cmd = template.replace("<sha>", srv.sha)
            loadgen(args, srv.port, mode="pipeline", clients=50, pipeline=16, requests=N_LG,
                    command=cmd, duration_ms=120000)
            return N_LG
        return run

    return [
        ("SET NX PX c50 P16", None, acquire),
        ("SET NX PX c50 P1", None, acquire_p1),
        ("GET c50 P16", get_prep, get),
        ("release EVALSHA c50 P16", lambda s: prefill(s, held, N_LG),
         release("EVALSHA <sha> 1 lock:{i} %s" % TOKEN)),
        ("LOCK.RELEASE c50 P16",
         lambda s: prefill(s, "LOCK.ACQUIRE lock:{i} %s 600000" % TOKEN, N_LG),
         release("LOCK.RELEASE lock:{i} %s" % TOKEN)),
    ]


def server_args(args, tag):
    extra = args.server_args.split()
    if "--appendonly" in extra and "--dir" not in extra:
        d = os.path.join(OUT, "journal-" + tag)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        extra += ["--dir", d]
    return extra


def measure(args, latchd, name, prep, run):
    tag = "%s.%s" % (name.replace(".", "_").replace(" ", "_"), latchd.strip("/").replace("/", "_"))
    out = os.path.join(OUT, tag)
    for f in os.listdir(OUT):
        if f.startswith(tag):
            os.remove(os.path.join(OUT, f))
    srv = Server("latch", lambda p: ["valgrind", "--tool=callgrind", "--separate-threads=yes",
                                     "--callgrind-out-file=" + out, latchd, "--port", str(p),
                                     "--bind", "127.0.0.1", "--io-threads", "1"]
                 + server_args(args, tag), "/tmp")
    srv.start()
    try:
        srv.sha = srv.call("SCRIPT", "LOAD", UNLOCK_SCRIPT)
        if prep:
            prep(srv)
        callgrind(srv.proc.pid, "-z")
        n = run(srv)
        callgrind(srv.proc.pid, "-d")
        return total_ir(out) / n
    finally:
        srv.stop()


def main():
    global OUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--latchd", action="append", required=True, help="a latchd binary (repeat)")
    ap.add_argument("--loadgen", default="/work/bench-before/build-bench-release/bench/latch_loadgen")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--filter", default="")
    ap.add_argument("--out", default=OUT, help="directory for the callgrind dumps")
    ap.add_argument("--server-args", default="", help="more latchd options (one string)")
    args = ap.parse_args()
    OUT = args.out
    os.makedirs(OUT, exist_ok=True)
    print("| workload | binary | instructions/request |")
    print("|---|---|---:|")
    for name, prep, run in workloads(args):
        if args.filter and args.filter not in name:
            continue
        for r in range(args.rounds):
            for latchd in args.latchd:
                ins = measure(args, latchd, name, prep, run)
                print("| %s | %s | %.0f |" % (name, latchd, ins), flush=True)


if __name__ == "__main__":
    main()
