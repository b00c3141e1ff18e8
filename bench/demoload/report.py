"""The Markdown report of bench/demo_load.py: the seed's numbers beside ours, per scenario,
and the checks that make the run fail."""

import collections
import statistics

from benchkit.report import fmt
from benchkit.stats import median, paired_ratio

BACKENDS = ("redis", "latch")
LABEL = {"redis": "Redis", "latch": "latchd"}

# The Go service's published figures (the seed article), and this goals on one
# 2-core machine that also runs PostgreSQL, the lock server and the load generator.
SEED = {"users": 200, "rps": 1426, "p95_ms": 40.23, "p99_ms": 148.2, "errors": 0,
        "count_ms": 18.8, "seats_per_s": 32153}
GOAL = {"p95_ms": 20.0, "p99_ms": 50.0, "count_ms": 2.0, "capacity_rps": 2 * 880}


def ratio(runs, key):
    """Median over rounds of latch/Redis (rounds paired by index)."""
    return paired_ratio(runs.get("latch", []), runs.get("redis", []), key)


def seed_section(report, sd):
    lines = ["", "**The seed's load** (%d virtual users, each pacing its requests to offer %.0f "
             "req/s in all: a think time of %.0f ms on average between the start of one "
             "request and the next, less the answer's time; %d s measured after %d s warm-up, "
             "80 %% reads / 20 %% writes as below, on a fresh %d-seat event). Goals here: p95 "
             "<= %.0f ms, p99 <= %.0f ms, 0 errors." % (
                 report["seed_users"], report["seed_rps"],
                 1000.0 * report["seed_users"] / report["seed_rps"], report["seed_seconds"],
                 report["mixed_warmup"], report["seed_seats"], GOAL["p95_ms"], GOAL["p99_ms"]),
             "",
             "| | VUs | offered req/s | req/s | p50 ms | p95 ms | p99 ms | errors | "
             "CPU PostgreSQL | CPU service | CPU lock server | other cores | goal |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
             "| seed (Go + Echo, k6, other hardware) | %d | | %s | | %.2f | %.1f | 0.00 %% "
             "| | | | | |" % (SEED["users"], fmt(SEED["rps"]), SEED["p95_ms"], SEED["p99_ms"])]
    for b in BACKENDS:
        runs = sd[b]
        cpu = lambda k: median([r["cpu_ms_per_request"][k] for r in runs])
        p95 = median([r["p95_ms"] for r in runs])
        p99 = median([r["p99_ms"] for r in runs])
        errs = sum(r["errors"] + r["unexpected"] for r in runs)
        met = (p95 is not None and p95 <= GOAL["p95_ms"] and p99 <= GOAL["p99_ms"]
               and errs == 0)
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |" % (
            LABEL[b], runs[0]["users"], fmt(runs[0]["offered_rps"]),
            fmt(median([r["rps"] for r in runs])),
            fmt(median([r["p50_ms"] for r in runs]), "%.1f"), fmt(p95, "%.1f"),
            fmt(p99, "%.1f"), errs, fmt(cpu("postgres"), "%.3f"), fmt(cpu("service"), "%.3f"),
            fmt(cpu("lock_server"), "%.3f"),
            fmt(median([r["cores_busy_other"] for r in runs]), "%.2f"),
            "met" if met else "**not met**"))
    lines.append("| **latch/Redis** | | | %s | %s | %s | %s | | | | | | |" % (
        fmt(ratio(sd, "rps"), "%.2fx"), fmt(ratio(sd, "p50_ms"), "%.2fx"),
        fmt(ratio(sd, "p95_ms"), "%.2fx"), fmt(ratio(sd, "p99_ms"), "%.2fx")))
    return lines


def markdown(report):
    m = report["machine"]
    s = report["scenarios"]
    lines = [
        "Run %s (%s mode, %d rounds, order alternating %s), %d CPUs (%s), kernel %s; "
        "1-min load average %.2f at start, %.2f at end. PostgreSQL %s with %s, redis-server %s, "
        "latchd (this tree, `--port P --bind 127.0.0.1`), latch-reservation defaults "
        "(--workers 16 --pg-pool 10, lock TTL 5 s, no lock wait). Client: this script, one "
        "asyncio thread on the same machine. Values are medians over rounds; latch/Redis is "
        "the median of the per-round ratios. Took %.0f s."
        % (report["date"], report["mode"], report["rounds"],
           "Redis, latchd / latchd, Redis", m["nproc"], m["cpu"], m["kernel"],
           report["load_start"][0], report["load_end"][0], report["postgres_version"],
           "its durable defaults (fsync on)" if report["pg_durable"]
           else "fsync=off synchronous_commit=off full_page_writes=off", report["redis_version"],
           report["seconds"]),
    ]
    if s.get("seed"):
        lines += seed_section(report, s["seed"])
    mx = s.get("capacity")
    if mx:
        lines += ["", "**Capacity** (goal >= %d req/s, 2x the 880 before this work): %d "
                  "virtual users, closed loop (no think time: it saturates the machine), %d s "
                  "measured after %d s "
                  "warm-up, 80 %% reads (GET event, a page of 100 available seats after a "
                  "random seat) / 20 %% writes "
                  "(reserve 1 seat with an Idempotency-Key; half of the holds later confirmed "
                  "or cancelled), on a fresh %d-seat event per run. CPU = ms of CPU time per "
                  "request (utime+stime from /proc) of each component; `other` = cores busy "
                  "outside this benchmark (the machine is shared)." % (
                      GOAL["capacity_rps"], report["mixed_users"], report["mixed_seconds"],
                      report["mixed_warmup"], report["mixed_seats"]), "",
                  "| lock server | req/s | p50 ms | p95 ms | p99 ms | errors | 409 | "
                  "CPU PostgreSQL | CPU service | CPU lock server | CPU client | other cores |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for b in BACKENDS:
            runs = mx[b]
            cpu = lambda k: median([r["cpu_ms_per_request"][k] for r in runs])
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                LABEL[b], fmt(median([r["rps"] for r in runs])),
                fmt(median([r["p50_ms"] for r in runs]), "%.1f"),
                fmt(median([r["p95_ms"] for r in runs]), "%.1f"),
                fmt(median([r["p99_ms"] for r in runs]), "%.1f"),
                "+".join(str(r["errors"] + r["unexpected"]) for r in runs),
                fmt(median([r["conflicts_409"] for r in runs])),
                fmt(cpu("postgres"), "%.3f"), fmt(cpu("service"), "%.3f"),
                fmt(cpu("lock_server"), "%.3f"), fmt(cpu("client"), "%.3f"),
                fmt(median([r["cores_busy_other"] for r in runs]), "%.2f")))
        lines.append("| **latch/Redis** | **%s** | %s | %s | %s | | | | | %s | | |" % (
            fmt(ratio(mx, "rps"), "%.2fx"), fmt(ratio(mx, "p50_ms"), "%.2fx"),
            fmt(ratio(mx, "p95_ms"), "%.2fx"), fmt(ratio(mx, "p99_ms"), "%.2fx"),
            fmt(ratio_cpu(mx, "lock_server"), "%.2fx")))
        def kind_ms(b, kind, q):
            return median([r["latency_ms_by_kind"].get(kind, {}).get(q) for r in mx[b]])
        kinds = (("reserve", "reserve (takes the seat lock)"), ("confirm", "confirm"),
                 ("cancel", "cancel"), ("read_event", "GET event"),
                 ("read_seats", "list seats"))
        lines += ["", "Latency by kind of request in the mixed load, p50 / p99 ms (median over "
                  "rounds); only reserve touches the lock server:", "",
                  "| lock server | " + " | ".join(k[1] for k in kinds) + " |",
                  "|---|" + "---:|" * len(kinds)]
        for b in BACKENDS:
            lines.append("| %s | %s |" % (LABEL[b], " | ".join(
                "%s / %s" % (fmt(kind_ms(b, k, "p50"), "%.1f"), fmt(kind_ms(b, k, "p99"), "%.1f"))
                for k, _ in kinds)))
        lines += ["", "Per round (rps): " + "; ".join(
            "%s %s" % (LABEL[b], ", ".join(fmt(r["rps"]) for r in mx[b])) for b in BACKENDS)
            + ". 409s by code (all rounds): " + "; ".join(
            "%s %s" % (LABEL[b], codes(mx[b], "conflicts_by_code")) for b in BACKENDS) + "."]
    for key, title in (("one_seat", "**50 users on one seat**, at once, one instance"),
                       ("three", "**3 instances, 100 users on one seat**, spread "
                        "round-robin (all on the same lock server and database)")):
        sc = s.get(key)
        if not sc:
            continue
        lines += ["", title + ": exactly one 201 expected.", "",
                  "| lock server | 201 per round | 409 per round | 409 codes (all rounds) | "
                  "time ms (median) | check |", "|---|---|---|---|---:|---|"]
        for b in BACKENDS:
            runs = sc[b]
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                LABEL[b], ", ".join(str(r["successes"]) for r in runs),
                ", ".join(str(r["conflicts_409"]) for r in runs), codes(runs, "outcomes", "409 "),
                fmt(median([r["ms"] for r in runs]), "%.1f"),
                "ok" if all(r["ok"] for r in runs) else "**FAILED**"))
        lines.append("| **latch/Redis** | | | | %s | |" % fmt(ratio(sc, "ms"), "%.2fx"))
    ms = s.get("many_seats")
    if ms:
        lines += ["", "**%d bookings of different seats**, %d in flight, one instance: all 201 "
                  "expected." % (report["bookings"], report["in_flight"]), "",
                  "| lock server | 201 per round | time s | bookings/s | p50 ms | p99 ms | check |",
                  "|---|---|---:|---:|---:|---:|---|"]
        for b in BACKENDS:
            runs = ms[b]
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                LABEL[b], ", ".join(str(r["successes"]) for r in runs),
                fmt(median([r["seconds"] for r in runs]), "%.2f"),
                fmt(median([r["bookings_per_s"] for r in runs])),
                fmt(median([r["p50_ms"] for r in runs]), "%.1f"),
                fmt(median([r["p99_ms"] for r in runs]), "%.1f"),
                "ok" if all(r["ok"] for r in runs) else "**FAILED**"))
        lines.append("| **latch/Redis** | | %s | %s | %s | %s | |" % (
            fmt(ratio(ms, "seconds"), "%.2fx"), fmt(ratio(ms, "bookings_per_s"), "%.2fx"),
            fmt(ratio(ms, "p50_ms"), "%.2fx"), fmt(ratio(ms, "p99_ms"), "%.2fx")))
    bk = s.get("bulk")
    if bk:
        lines += ["", "**%d seats**: create them (one POST /events; no lock server involved), "
                  "then read their availability (GET /events/{id}) %d times in a row: median "
                  "(goal <= %.0f ms)." % (report["bulk_seats"], bk["redis"][0]["counts"],
                                          GOAL["count_ms"]), "",
                  "| | seats/s | create s | availability ms (median) | max ms | goal |",
                  "|---|---:|---:|---:|---:|---|",
                  "| seed (Go, other hardware) | %s | 3.1 | %.1f | | |" % (
                      fmt(SEED["seats_per_s"]), SEED["count_ms"])]
        for b in BACKENDS:
            runs = bk[b]
            count = median([r["count_ms"] for r in runs])
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                LABEL[b], fmt(median([r["seats_per_s"] for r in runs])),
                fmt(median([r["seconds"] for r in runs]), "%.2f"), fmt(count, "%.2f"),
                fmt(median([r["count_max_ms"] for r in runs]), "%.2f"),
                "met" if count is not None and count <= GOAL["count_ms"] else "**not met**"))
        lines.append("| **latch/Redis** | %s | | %s | | |" % (
            fmt(ratio(bk, "seats_per_s"), "%.2fx"), fmt(ratio(bk, "count_ms"), "%.2fx")))
    lines += ["", "Correctness: %s." % ("all checks passed" if not report["failures"]
                                        else "FAILED: " + "; ".join(report["failures"]))]
    return "\n".join(lines) + "\n"


def ratio_cpu(mx, key):
    rs = [x["cpu_ms_per_request"][key] / y["cpu_ms_per_request"][key]
          for x, y in zip(mx["latch"], mx["redis"])
          if x["cpu_ms_per_request"][key] is not None and y["cpu_ms_per_request"][key]]
    return statistics.median(rs) if rs else None


def codes(runs, field, prefix=""):
    total = collections.Counter()
    for r in runs:
        for k, v in r[field].items():
            if k.startswith(prefix):
                total[k[len(prefix):].split(" ")[-1]] += v
    return ", ".join("%s %d" % (k, v) for k, v in sorted(total.items())) or "-"


def check(report, name, backend, rnd, r):
    problems = []
    if name in ("seed", "capacity"):
        if r["errors"] or r["unexpected"]:
            problems.append("%d errors, %d unexpected statuses (first: %s)"
                            % (r["errors"], r["unexpected"], r["first_error"]))
        if not r["requests"]:
            problems.append("no request completed")
    elif not r["ok"]:
        problems.append("%s (first error: %s)" % (
            {"one_seat": "%d successes, %d x 409 of %s users, %s seats left"
             % (r.get("successes", 0), r.get("conflicts_409", 0), r.get("users"),
                r.get("available_after")),
             "three": "%d successes, %d x 409 of %s users, %s seats left"
             % (r.get("successes", 0), r.get("conflicts_409", 0), r.get("users"),
                r.get("available_after")),
             "bulk": "availability %s of %s seats" % (r.get("available"), r.get("seats")),
             "many_seats": "%s of %s bookings succeeded, %s seats left"
             % (r.get("successes"), r.get("bookings"), r.get("available_after")),
             }.get(name, "failed"), r.get("first_error")))
    for p in problems:
        msg = "%s on %s, round %d: %s" % (name, LABEL[backend], rnd + 1, p)
        report["failures"].append(msg)
        print("CHECK FAILED: " + msg, flush=True)


def summary_line(name, r):
    if name in ("seed", "capacity"):
        return "%.0f req/s p50 %.1f p95 %.1f p99 %.1f ms, %d errors, %d x 409" % (
            r["rps"], r["p50_ms"] or 0, r["p95_ms"] or 0, r["p99_ms"] or 0,
            r["errors"] + r["unexpected"], r["conflicts_409"])
    if name in ("one_seat", "three"):
        return "%d x 201, %d x 409 (%s) in %.1f ms" % (r["successes"], r["conflicts_409"],
                                                       r["outcomes"], r["ms"])
    if name == "many_seats":
        return "%d/%d x 201 in %.2f s (%.0f/s)" % (r["successes"], r["bookings"], r["seconds"],
                                                   r["bookings_per_s"])
    return "%d seats in %.2f s (%.0f seats/s), availability in %.2f ms (median of %d)" % (
        r["seats"], r["seconds"], r["seats_per_s"], r["count_ms"], r["counts"])


