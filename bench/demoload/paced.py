"""The seed's load open loop: latch_httpload (C++) offers a constant arrival rate to one
service instance, and this module samples where the CPU time went over the measured window:
PostgreSQL (postmaster and backends), the service, the lock server, the generator, and the
rest of the machine (/proc), with the load average during the run."""

import asyncio
import json
import os
import subprocess
import threading
import time

from benchkit.procs import Failure, machine_busy_jiffies, proc_cpu_jiffies
from benchkit.report import loadavg

from .mix import write_scenario
from .services import create_event

# The seed's published figures are the goal of the paced load (issue 26): p95 <= 40 ms,
# p99 <= 150 ms, no error.
PACED_GOAL = {"p95_ms": 40.0, "p99_ms": 150.0, "errors": 0}


def meets_goal(r):
    return (r.get("sent", 0) > 0 and r["errors"] == 0 and r["p95_ms"] <= PACED_GOAL["p95_ms"]
            and r["p99_ms"] <= PACED_GOAL["p99_ms"])


def run_paced(ctx, svc, binary, rate, seconds, warmup, seats, users, tag, timeout_ms=10000):
    """One open-loop run at `rate` req/s for warmup + seconds against svc, on a fresh event of
    `seats` seats. Returns the tool's JSON plus cpu_s (seconds of CPU per process over the
    window), cores (the same divided by the window), and the load averages seen."""
    event, _ = asyncio.run(create_event(svc.port, "paced " + tag, seats))
    spec = os.path.join(ctx.log_dir, "scenario-%s.txt" % tag)
    write_scenario(spec, users, event, seats, tag)
    argv = [binary, "--port", str(svc.port), "--scenario", spec, "--rate", "%g" % rate,
            "--seconds", "%g" % seconds, "--warmup-ms", str(int(warmup * 1000)),
            "--timeout-ms", str(timeout_ms), "--max-connections", str(users)]
    lock_pid = ctx.lock[svc.backend].pid
    samples = {}
    loads = []

    def sample(name, gen_pid):
        samples[name] = {"postgres": ctx.pg.cpu(), "service": proc_cpu_jiffies(svc.pid),
                         "lock_server": proc_cpu_jiffies(lock_pid),
                         "generator": proc_cpu_jiffies(gen_pid),
                         "machine": machine_busy_jiffies(), "t": time.monotonic()}

    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = threading.Event()

    def load_sampler():  # the 1-minute load average every 5 s of the window
        while not done.wait(5.0):
            if "start" in samples and "end" not in samples:
                loads.append(loadavg()[0])
    threading.Thread(target=load_sampler, daemon=True).start()
    result = None
    try:
        deadline = time.monotonic() + warmup + seconds + timeout_ms / 1000.0 + 60
        for line in proc.stdout:  # ends when the tool exits; the tool bounds its own run
            if line.startswith("phase measure-start"):
                sample("start", proc.pid)
            elif line.startswith("phase measure-end"):
                sample("end", proc.pid)
                loads.append(loadavg()[0])
            elif line.startswith("{"):
                result = json.loads(line)
            if time.monotonic() > deadline:
                break
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        done.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if result is None or "start" not in samples or "end" not in samples:
        raise Failure("latch_httpload failed (exit %s): %s" % (proc.returncode,
                                                               proc.stderr.read()[-1000:]))
    hz = ctx.hz
    s0, s1 = samples["start"], samples["end"]
    window = s1["t"] - s0["t"]
    cpu_s = {k: (s1[k] - s0[k]) / hz for k in ("postgres", "service", "lock_server", "generator")}
    cpu_s["other"] = max(0.0, (s1["machine"] - s0["machine"]) / hz - sum(cpu_s.values()))
    result.update({
        "event": event, "users": users, "cpu_window_s": window, "cpu_s": cpu_s,
        "cores": {k: v / window for k, v in cpu_s.items()},
        "cpu_ms_per_request": {k: 1000.0 * v / result["completed"] if result["completed"] else None
                               for k, v in cpu_s.items() if k != "other"},
        "load_during": sum(loads) / len(loads) if loads else None,
        "load_end": loads[-1] if loads else None,
        "met": None})
    result["met"] = meets_goal(result)
    return result


def search_rates(run_one, backends, rate, steps):
    """The highest rate below `rate` (which missed the goal) that meets it, per backend: a
    bisection of [0, rate] starting at 0.7 x rate, `steps` runs each, rounded to 10 req/s.
    run_one(backend, rate, step) -> result. The backends alternate within each step, so the
    two searches share the machine's moods. Returns ({backend: [(rate, result)]},
    {backend: best rate met or None})."""
    lo = {b: 0.0 for b in backends}
    hi = {b: float(rate) for b in backends}
    tried = {b: [] for b in backends}
    best = {b: None for b in backends}
    for step in range(steps):
        for b in (backends if step % 2 == 0 else tuple(reversed(backends))):
            r = round(0.7 * rate if step == 0 else (lo[b] + hi[b]) / 2.0, -1)
            res = run_one(b, r, step)
            tried[b].append((r, res))
            if res["met"]:
                lo[b] = r
                best[b] = max(best[b] or 0.0, r)
            else:
                hi[b] = r
    return tried, best
