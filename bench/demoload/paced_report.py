"""The Markdown report of bench/demo_load.py --paced: the seed's mix open loop against each
lock server, where the CPU time went, and the search for the highest rate meeting the goal."""

from benchkit.report import fmt
from benchkit.stats import paired_ratio

from .paced import PACED_GOAL
from .report import BACKENDS, LABEL, SEED


def _row(label, rate, r):
    return ("| %s | %s | %d | %d | %d | %s | %s | %s | %s | %s | %d | %d | %s | %s |" % (
        label, fmt(rate), r["sent"], r["completed"], r["errors"], fmt(r["achieved_rps"]),
        fmt(r["p50_ms"], "%.1f"), fmt(r["p95_ms"], "%.1f"), fmt(r["p99_ms"], "%.1f"),
        fmt(r["max_ms"], "%.1f"), r["conflicts"], r["max_open"], fmt(r["load_during"], "%.1f"),
        "met" if r["met"] else "**not met**"))


HEAD = ("| lock server | offered req/s | sent | completed | errors | achieved req/s | p50 ms | "
        "p95 ms | p99 ms | max ms | 409 | connections | load avg | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")


def paced_markdown(report):
    m = report["machine"]
    p = report["scenarios"]["paced"]
    lines = [
        "Run %s, %d CPUs (%s), kernel %s; 1-min load average %.2f at start, %.2f at end. "
        "PostgreSQL %s with %s, redis-server %s, latchd (this tree, `--port P --bind "
        "127.0.0.1`), latch-reservation defaults (--workers 16 --pg-pool 10, lock TTL 5 s). "
        "Generator: `bench/latch_httpload` (C++, one thread), open loop: request k scheduled at "
        "start + k / rate, latency from that time; up to %d keep-alive connections. Took %.0f s."
        % (report["date"], m["nproc"], m["cpu"], m["kernel"], report["load_start"][0],
           report["load_end"][0], report["postgres_version"],
           "its durable defaults (fsync on)" if report["pg_durable"]
           else "fsync=off synchronous_commit=off full_page_writes=off", report["redis_version"],
           report["seed_users"], report["seconds"]),
        "",
        "**The seed's load, open loop** at %.0f req/s, %d s measured after %d s warm-up, the "
        "seed's mix (80 %% reads: GET event, a page of 100 available seats; 20 %% writes: "
        "reserve a seat of the user's last page with an Idempotency-Key, confirm or cancel "
        "half of the holds) on a fresh %d-seat event per run. Errors: 5xx, other unexpected "
        "statuses, no answer within 10 s of the scheduled time, connection failures; a 409 "
        "(seat taken, lock busy) is an answer. Goal (the seed's): p95 <= %.0f ms, p99 <= %.0f "
        "ms, 0 errors." % (p["rate"], p["seconds"], report["mixed_warmup"],
                           report["seed_seats"], PACED_GOAL["p95_ms"], PACED_GOAL["p99_ms"]),
        "", HEAD[0], HEAD[1],
        "| seed (Go + Echo, k6, other hardware) | | | %d | 0 | %s | | %.2f | %.1f | | | | | |" % (
            171380, fmt(SEED["rps"]), SEED["p95_ms"], SEED["p99_ms"])]
    runs = p["runs"]
    for b in BACKENDS:
        for r in runs[b]:
            lines.append(_row(LABEL[b], p["rate"], r))
    if runs["redis"] and runs["latch"]:
        # The median of the per-round ratios (rounds paired by index).
        ratio = lambda k: fmt(paired_ratio(runs["latch"], runs["redis"], k), "%.2fx")
        lines.append("| **latch/Redis** | | | | | %s | %s | %s | %s | %s | | | | |" % (
            ratio("achieved_rps"), ratio("p50_ms"), ratio("p95_ms"), ratio("p99_ms"),
            ratio("max_ms")))
    kinds = ("reserve", "confirm", "cancel", "read_event", "read_seats")
    lines += ["", "Latency by kind of request, p50 / p99 ms (from the scheduled time); only "
              "reserve takes a seat lock:", "",
              "| lock server | " + " | ".join(kinds) + " |", "|---|" + "---:|" * len(kinds)]
    for b in BACKENDS:
        for r in runs[b]:
            lines.append("| %s | %s |" % (LABEL[b], " | ".join(
                "%s / %s (n %d)" % (fmt(r[k + "_p50_ms"], "%.1f"), fmt(r[k + "_p99_ms"], "%.1f"),
                                    r[k + "_n"]) for k in kinds)))
    lines += ["", "Where the CPU time went over each measured window (seconds of CPU from "
              "/proc/PID/stat: PostgreSQL = postmaster + backends; `other` = the machine's busy "
              "time outside these processes, i.e. the other builders), in cores (of 2) and in "
              "ms per completed request:", "",
              "| lock server | window s | PostgreSQL | service | lock server | generator | "
              "other | cores ours | ms/req PostgreSQL | ms/req service | ms/req lock server | "
              "ms/req generator |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for b in BACKENDS:
        for r in runs[b]:
            c, pr = r["cpu_s"], r["cpu_ms_per_request"]
            ours = sum(v for k, v in r["cores"].items() if k != "other")
            lines.append("| %s | %.1f | %.1f s (%.2f) | %.1f s (%.2f) | %.2f s (%.3f) | "
                         "%.1f s (%.2f) | %.1f s (%.2f) | %.2f | %s | %s | %s | %s |" % (
                             LABEL[b], r["cpu_window_s"], c["postgres"], r["cores"]["postgres"],
                             c["service"], r["cores"]["service"], c["lock_server"],
                             r["cores"]["lock_server"], c["generator"], r["cores"]["generator"],
                             c["other"], r["cores"]["other"], ours,
                             fmt(pr["postgres"], "%.3f"), fmt(pr["service"], "%.3f"),
                             fmt(pr["lock_server"], "%.3f"), fmt(pr["generator"], "%.3f")))
    sr = p.get("search")
    if sr:
        lines += ["", "**The highest rate meeting the goal** (bisection below %.0f req/s, %d s "
                  "per run, lock servers alternating): " % (p["rate"], sr["seconds"]) + "; ".join(
                      "%s %s" % (LABEL[b], fmt(sr["best"][b]) + " req/s" if sr["best"][b]
                                 else "none found") for b in BACKENDS) + ".", "",
                  HEAD[0] + " CPU s PG / service / lock / generator / other |",
                  HEAD[1] + "---|"]
        for b in BACKENDS:
            for r in sr["tried"][b]:
                c = r["cpu_s"]
                lines.append(_row(LABEL[b], r["rate"], r) + " %.1f / %.1f / %.2f / %.1f / %.1f |"
                             % (c["postgres"], c["service"], c["lock_server"], c["generator"],
                                c["other"]))
    lines += ["", "Correctness: %s." % ("no 5xx or unexpected status" if not report["failures"]
                                        else "FAILED: " + "; ".join(report["failures"]))]
    return "\n".join(lines) + "\n"
