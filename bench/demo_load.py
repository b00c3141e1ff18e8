#!/usr/bin/env python3
"""End-to-end load test of the reservation demo: Redis vs latchd as its lock server, in one run,
beside the published numbers of the Go service it grew from (the seed).

    python3 bench/demo_load.py --quick    # about 3 minutes: short runs, 50 users for capacity
    python3 bench/demo_load.py            # about 10 minutes: the seed's 2-minute load per
                                          # lock server, 3 capacity rounds of 200 users
    python3 bench/demo_load.py --only seed,bulk   # some scenarios only
    python3 bench/demo_load.py --paced 1426 --seconds 60   # the seed's load open loop (C++
                                          # generator), and the highest rate meeting its goal

It starts, on 127.0.0.1 and free ports picked at run time, a real PostgreSQL 15 (initdb +
postgres in a temp dir, as the `postgres` user when run as root), redis-server, latchd and two
`latch-reservation` instances: one with --lock-url redis://...:<redis>, one with latchd's URL,
each on its own database. It then runs against each backend, alternating the order every round
(A B, B A, ...):

  seed        the seed's load: 200 virtual users pacing their requests to offer 1,426 req/s in
              all (think time), 80 % reads (GET event, a page of 100 available seats) / 20 %
              writes (reserve 1 seat with an Idempotency-Key; confirm or cancel half of the
              holds later), 2 minutes (20 s quick): req/s, p50/p95/p99, errors beside the
              seed's 1,426 req/s, p95 40 ms, p99 148 ms; CPU time per request of PostgreSQL,
              the service, the lock server and this client
  capacity    the same mix in a closed loop without think time (saturates the machine)
  one_seat    50 users reserve the same seat at once: exactly one 201, 49 x 409
  three       two more service instances (same lock server and database), 100 users on one
              seat spread round-robin over the three: exactly one 201
  many_seats  1,000 bookings of different seats, 50 in flight: all 201, and how long
  bulk        create an event with 100,000 seats (seats/s), then its availability read 20
              times (median ms): the seed's 32,153 seats/s and 18.8 ms

--paced RATE runs only the seed's mix open loop: bench/loadgen's latch_httpload sends it at a
constant arrival rate (latency from each request's scheduled time) for --seconds (60), once per
lock server, with the CPU seconds of PostgreSQL, the service, the lock server and the
generator over the window and the load average; when a server misses the seed's p95 40 ms /
p99 150 ms / 0 errors, a bisection (--search-steps runs of --search-seconds each) finds the
highest rate that meets them. Results: bench/results/demo_paced.md and .json.

It prints a Markdown table per scenario (median over rounds, and the median of the per-round
ratios latch/Redis), writes bench/results/demo_load.md and .json, stops everything and removes
the temp dir (also on Ctrl-C or error), and exits 1 if a correctness check failed.
Python 3 standard library only (helpers in bench/benchkit/, scenarios in bench/demoload/);
every loop is bounded in count and every wait in time.
"""

import argparse
import asyncio
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from benchkit.postgres import Postgres, find_pg_bindir
from benchkit.procs import Failure, as_postgres_kwargs, proc_cpu_jiffies
from benchkit.report import loadavg, machine
from demoload import scenarios
from demoload.paced import run_paced, search_rates
from demoload.paced_report import paced_markdown
from demoload.report import BACKENDS, LABEL, SEED, check, markdown, summary_line
from demoload.services import start_lock_server, start_service

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
SCENARIOS = ("seed", "capacity", "one_seat", "three", "many_seats", "bulk")


class Ctx:
    pass


def run_scenarios(ctx, args, report):
    s = report["scenarios"]
    stamp = datetime.datetime.now().strftime("%H%M%S")

    def rounds_of(name, fn, rounds):
        if name not in args.only:
            return
        s[name] = {b: [] for b in BACKENDS}
        for rnd in range(rounds):
            order = BACKENDS if rnd % 2 == 0 else tuple(reversed(BACKENDS))
            for b in order:
                tag = "%s-%s-%s-r%d" % (stamp, name, b, rnd)
                r = fn(b, tag)
                r["round"] = rnd + 1
                s[name][b].append(r)
                print("  %-16s %-6s round %d: %s" % (name, LABEL[b], rnd + 1,
                                                     summary_line(name, r)), flush=True)
                check(report, name, b, rnd, r)

    def seed(b, tag):
        return asyncio.run(scenarios.vu_load(
            ctx, ctx.svc[b], args.seed_users, args.seed_seconds, args.warmup, args.seed_seats,
            tag, pace=args.seed_users / args.seed_rps))

    def capacity(b, tag):
        return asyncio.run(scenarios.vu_load(ctx, ctx.svc[b], args.users, args.seconds,
                                             args.warmup, args.seats, tag))

    def one(b, tag):
        return asyncio.run(scenarios.one_seat([ctx.svc[b].port], 50, tag))

    def three(b, tag):
        extra = []
        try:
            for k in range(2):
                extra.append(start_service(args.service_bin, "service-%s-extra%d" % (b, k + 1),
                                           ctx.pg.conninfo(ctx.db[b]), ctx.url[b], ctx.log_dir,
                                           extra=args.service_flags))
            ports = [ctx.svc[b].port] + [p.port for p in extra]
            return asyncio.run(scenarios.one_seat(ports, 100, tag))
        finally:
            for p in extra:
                p.stop()

    def many(b, tag):
        return asyncio.run(scenarios.many_seats(ctx.svc[b].port, args.bookings, args.in_flight,
                                                tag))

    def blk(b, tag):
        return asyncio.run(scenarios.bulk(ctx.svc[b].port, args.bulk_seats, tag))

    print("seed load: %d users offering %.0f req/s, %d s; capacity: %d users closed loop, "
          "%d s (+%d s warm-up each)" % (args.seed_users, args.seed_rps, args.seed_seconds,
                                         args.users, args.seconds, args.warmup), flush=True)
    rounds_of("seed", seed, args.seed_rounds)
    rounds_of("capacity", capacity, args.rounds)
    rounds_of("one_seat", one, args.rounds)
    rounds_of("three", three, args.rounds)
    rounds_of("many_seats", many, args.rounds)
    rounds_of("bulk", blk, args.rounds)


def run_paced_scenario(ctx, args, report):
    """--paced: the seed's mix open loop at args.paced req/s against each lock server, then
    (if either missed the goal) the search for the highest rate that meets it."""
    stamp = datetime.datetime.now().strftime("%H%M%S")
    p = report["scenarios"]["paced"] = {"rate": args.paced, "seconds": args.seconds,
                                        "runs": {b: [] for b in BACKENDS}}

    def one(b, rate, seconds, label):
        tag = "%s-%s-%s" % (stamp, label, b)
        r = run_paced(ctx, ctx.svc[b], args.httpload, rate, seconds, args.warmup,
                      args.seed_seats, args.seed_users, tag)
        print("  %-14s %-6s %5.0f req/s offered: %s" % (label, LABEL[b], rate, paced_line(r)),
              flush=True)
        if r["err_5xx"] or r["err_status"]:  # an answer the service must not give: a bug
            msg = "paced %s on %s: %d x 5xx, %d unexpected statuses (first: %s)" % (
                label, LABEL[b], r["err_5xx"], r["err_status"], r["first_error"])
            report["failures"].append(msg)
            print("CHECK FAILED: " + msg, flush=True)
        return r

    print("paced: the seed's mix open loop at %.0f req/s, %d s (+%d s warm-up) per lock server"
          % (args.paced, args.seconds, args.warmup), flush=True)
    for rnd in range(args.paced_rounds):
        for b in (BACKENDS if rnd % 2 == 0 else tuple(reversed(BACKENDS))):
            p["runs"][b].append(one(b, args.paced, args.seconds, "paced-r%d" % (rnd + 1)))
    missed = any(not r["met"] for runs in p["runs"].values() for r in runs)
    if missed and args.search_steps > 0:
        print("the goal was missed: searching the highest rate meeting it (%d steps of %d s)"
              % (args.search_steps, args.search_seconds), flush=True)
        tried, best = search_rates(
            lambda b, rate, step: one(b, rate, args.search_seconds, "search-%d" % (step + 1)),
            BACKENDS, args.paced, args.search_steps)
        p["search"] = {"seconds": args.search_seconds, "best": best,
                       "tried": {b: [{"rate": r, **res} for r, res in tried[b]]
                                 for b in BACKENDS}}


def paced_line(r):
    return ("%d sent, %d completed, %d errors, %.0f req/s, p50 %.1f p95 %.1f p99 %.1f max %.1f "
            "ms, %d x 409, goal %s; CPU s: PostgreSQL %.1f, service %.1f, lock server %.2f, "
            "generator %.1f, other %.1f; load %.1f" % (
                r["sent"], r["completed"], r["errors"], r["achieved_rps"], r["p50_ms"],
                r["p95_ms"], r["p99_ms"], r["max_ms"], r["conflicts"],
                "met" if r["met"] else "MISSED", r["cpu_s"]["postgres"], r["cpu_s"]["service"],
                r["cpu_s"]["lock_server"], r["cpu_s"]["generator"], r["cpu_s"]["other"],
                r["load_during"] or 0))


def build(args):
    if args.no_build:
        return
    cache = os.path.join(args.build_dir, "CMakeCache.txt")
    targets = ["latchd", "latch-reservation"]
    if args.paced:
        targets.append("latch_httpload")  # a benchmark target: needs LATCH_BUILD_BENCH
    has_bench = False
    if os.path.exists(cache):
        with open(cache) as f:
            has_bench = "LATCH_BUILD_BENCH:BOOL=ON" in f.read()
    if not os.path.exists(cache) or (args.paced and not has_bench):
        # -Wno-restrict: GCC 12 reports a false -Wrestrict in std::string operator+ at -O2.
        subprocess.run(["cmake", "-S", ROOT, "-B", args.build_dir, "-DCMAKE_BUILD_TYPE=Release",
                        "-DLATCH_BUILD_TESTS=OFF",
                        "-DLATCH_BUILD_BENCH=%s" % ("ON" if args.paced else "OFF"),
                        "-DCMAKE_CXX_FLAGS=-Wno-restrict"], check=True, timeout=600)
    subprocess.run(["cmake", "--build", args.build_dir, "-j2", "--target"] + targets,
                   check=True, timeout=3600)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="about 3 minutes: seed load 20 s, 2 rounds, capacity 50 users 8 s")
    ap.add_argument("--only", default=",".join(SCENARIOS),
                    help="comma-separated scenarios (default all): " + ", ".join(SCENARIOS))
    ap.add_argument("--rounds", type=int, help="rounds per scenario (2 quick, 3 default)")
    ap.add_argument("--seed-seconds", type=int,
                    help="seed load measured seconds (20 quick, 120 default)")
    ap.add_argument("--seed-rps", type=float, default=SEED["rps"],
                    help="offered rate of the seed load (default the seed's 1426)")
    ap.add_argument("--paced", type=float, metavar="RATE",
                    help="only the seed's mix open loop at RATE req/s (C++ latch_httpload), "
                         "--seconds long (60), then a search for the highest rate meeting the "
                         "seed's p95/p99 if RATE misses it")
    ap.add_argument("--search-seconds", type=int, default=20,
                    help="--paced: seconds of each search run (20)")
    ap.add_argument("--search-steps", type=int, default=4,
                    help="--paced: bisection steps per lock server (4; 0: no search)")
    ap.add_argument("--paced-rounds", type=int, default=1,
                    help="--paced: runs per lock server at RATE, order alternating (1)")
    ap.add_argument("--seed-seats", type=int, default=100000,
                    help="seats of the seed load's fresh event per run (default 100000)")
    ap.add_argument("--users", type=int, help="capacity virtual users (50 quick, 200 default)")
    ap.add_argument("--seconds", type=int, help="capacity measured seconds (8 quick, 20 default)")
    ap.add_argument("--seats", type=int, default=5000,
                    help="seats of the capacity event (default 5000)")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-load"),
                    help="Release build tree with latchd and latch-reservation "
                         "(default build-load)")
    ap.add_argument("--no-build", action="store_true", help="use the binaries in --build-dir")
    ap.add_argument("--pg-fast", action="store_true",
                    help="fsync=off synchronous_commit=off full_page_writes=off (as the demo's "
                         "tests); default: PostgreSQL's durable defaults")
    ap.add_argument("--pg-setting", action="append", default=[], metavar="NAME=VALUE",
                    help="one more PostgreSQL setting (-c NAME=VALUE), repeatable, e.g. jit=off")
    ap.add_argument("--pg-version", default="15", help="PostgreSQL major version to use (15)")
    ap.add_argument("--latchd-flags", default="",
                    help="extra flags for latchd, e.g. '--io-threads 1'")
    ap.add_argument("--service-flags", default="",
                    help="extra flags for every latch-reservation instance, e.g. '--no-warm'")
    args = ap.parse_args()
    quick = args.quick
    args.service_flags = args.service_flags.split()
    args.latchd_flags = args.latchd_flags.split()
    args.only = [x.strip() for x in args.only.split(",") if x.strip()]
    for name in args.only:
        if name not in SCENARIOS:
            ap.error("unknown scenario %r (known: %s)" % (name, ", ".join(SCENARIOS)))
    args.rounds = args.rounds or (2 if quick else 3)
    args.seed_rounds = 1  # the seed's load is long enough to be its own median
    args.seed_users = SEED["users"]
    args.seed_seconds = args.seed_seconds or (20 if quick else 120)
    # 100,000 (the seed's stadium): 2 minutes of bookings never run out of seats.
    args.seed_seats = args.seed_seats
    args.users = args.users or (50 if quick else 200)
    args.seconds = args.seconds or (60 if args.paced else 8 if quick else 20)
    args.warmup = 1 if quick else 2
    args.bookings, args.in_flight, args.bulk_seats = 1000, 50, 100000
    args.build_dir = os.path.abspath(args.build_dir)

    pg_bindir = find_pg_bindir(args.pg_version)
    if not pg_bindir or not os.access(os.path.join(pg_bindir, "initdb"), os.X_OK):
        sys.exit("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin "
                 "(apt-get install postgresql)")
    for tool in ("postgres", "pg_isready", "createdb"):
        if not os.access(os.path.join(pg_bindir, tool), os.X_OK):
            sys.exit("missing %s in %s (apt-get install postgresql)" % (tool, pg_bindir))
    if not shutil.which("redis-server"):
        sys.exit("needs redis-server (apt-get install redis-server)")
    build(args)
    args.latchd = os.path.join(args.build_dir, "server", "latchd")
    args.httpload = os.path.join(args.build_dir, "bench", "latch_httpload")
    args.service_bin = os.path.join(args.build_dir, "demo", "reservation", "latch-reservation")
    for path in (args.latchd, args.service_bin) + ((args.httpload,) if args.paced else ()):
        if not os.access(path, os.X_OK):
            sys.exit("missing %s (build it: cmake --build %s -j2 --target latchd "
                     "latch-reservation latch_httpload, or drop --no-build)"
                     % (path, args.build_dir))

    # Ctrl-C and SIGTERM both unwind through the finally below.
    def on_term(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_term)

    report = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
              "mode": "paced" if args.paced else "quick" if quick else "default", "rounds": args.rounds,
              "machine": machine(), "load_start": loadavg(), "pg_durable": not args.pg_fast,
              "seed_users": args.seed_users, "seed_rps": args.seed_rps,
              "seed_seconds": args.seed_seconds, "seed_seats": args.seed_seats,
              "mixed_users": args.users, "mixed_seconds": args.seconds,
              "mixed_warmup": args.warmup, "mixed_seats": args.seats, "bookings": args.bookings,
              "in_flight": args.in_flight, "bulk_seats": args.bulk_seats, "scenarios": {},
              "latchd_flags": args.latchd_flags, "service_flags": args.service_flags,
              "failures": []}
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="latch-demo-load-")
    ctx = Ctx()
    ctx.hz = os.sysconf("SC_CLK_TCK")
    ctx.log_dir = tmp
    ctx.pg = None
    procs = []
    interrupted = False
    try:
        kw = as_postgres_kwargs()
        if kw:
            os.chown(tmp, kw["user"], kw["group"])
        os.chmod(tmp, 0o755)
        ctx.pg = Postgres(pg_bindir, tmp, durable=not args.pg_fast,
                          extra_settings=args.pg_setting)
        ctx.pg.start()
        report["postgres_version"] = subprocess.run(
            [os.path.join(pg_bindir, "postgres"), "--version"], capture_output=True, text=True,
            timeout=10).stdout.split()[2]
        ctx.db = {b: "tickets_" + b for b in BACKENDS}
        for db in ctx.db.values():
            ctx.pg.createdb(db)
        print("PostgreSQL %s on 127.0.0.1:%d (%s)" % (report["postgres_version"], ctx.pg.port,
                                                     tmp), flush=True)
        ctx.lock = {
            "redis": start_lock_server("redis", lambda p: [
                "redis-server", "--port", str(p), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no"], tmp),
            "latch": start_lock_server("latchd", lambda p: [
                args.latchd, "--port", str(p), "--bind", "127.0.0.1"] + args.latchd_flags, tmp),
        }
        procs += list(ctx.lock.values())
        report["redis_version"] = subprocess.run(
            ["redis-server", "--version"], capture_output=True, text=True,
            timeout=10).stdout.split("v=")[-1].split()[0]
        ctx.url = {b: "redis://127.0.0.1:%d" % ctx.lock[b].port for b in BACKENDS}
        ctx.svc = {}
        for b in BACKENDS:
            ctx.svc[b] = start_service(args.service_bin, "service-" + b,
                                       ctx.pg.conninfo(ctx.db[b]), ctx.url[b], tmp,
                                       extra=args.service_flags)
            ctx.svc[b].backend = b
            procs.append(ctx.svc[b])
            print("%s: lock server %s, service http://127.0.0.1:%d, database %s" % (
                LABEL[b], ctx.url[b], ctx.svc[b].port, ctx.db[b]), flush=True)
        ctx.our_jiffies = lambda: ctx.pg.cpu() + sum(proc_cpu_jiffies(p.pid) for p in procs)
        if args.paced:
            run_paced_scenario(ctx, args, report)
        else:
            run_scenarios(ctx, args, report)
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: stopping everything", file=sys.stderr)
    except Failure as e:
        print("error: %s" % e, file=sys.stderr)
        report["failures"].append("setup: %s" % str(e).splitlines()[0])
        interrupted = True
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not skip cleanup
        for p in reversed(procs):
            p.stop()
        if ctx.pg:
            ctx.pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if interrupted:
        sys.exit(130 if not report["failures"] else 2)
    report["seconds"] = time.monotonic() - started
    report["load_end"] = loadavg()
    table = paced_markdown(report) if args.paced else markdown(report)
    name = "demo_paced" if args.paced else "demo_load"
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, name + ".json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(RESULTS, name + ".md"), "w") as f:
        f.write(table)
    print()
    print(table)
    print("done in %.0f s; results in %s" % (report["seconds"], RESULTS))
    sys.exit(1 if report["failures"] else 0)


if __name__ == "__main__":
    main()
