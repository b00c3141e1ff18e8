"""Statistics of the benchmarks: nearest-rank percentiles, medians that skip missing values,
and the median of per-round ratios (how two servers measured in alternating rounds compare:
each round's ratio cancels the machine's speed of that moment, the median drops outliers)."""

import math
import statistics


def percentile(sorted_values, q):
    """Nearest-rank percentile q (0 < q <= 100) of an ascending list; None when empty.
    Nearest rank (no interpolation): the value is one that was measured."""
    if not sorted_values:
        return None
    i = math.ceil(q / 100.0 * len(sorted_values)) - 1
    return sorted_values[min(len(sorted_values) - 1, max(0, i))]


def median(values):
    """Median of the values that are not None; None when there are none."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def paired_ratio(a_runs, b_runs, key):
    """Median over rounds of a[key] / b[key], rounds paired by index; rounds where either
    value is missing, or b's is zero, are skipped. None when no pair is left."""
    rs = [x[key] / y[key] for x, y in zip(a_runs, b_runs)
          if x.get(key) is not None and y.get(key)]
    return statistics.median(rs) if rs else None


def latency_summary(seconds):
    """p50/p95/p99/max in ms of a list of latencies in seconds (any order)."""
    lat = sorted(seconds)
    ms = lambda v: None if v is None else 1000.0 * v
    return {"p50_ms": ms(percentile(lat, 50)), "p95_ms": ms(percentile(lat, 95)),
            "p99_ms": ms(percentile(lat, 99)), "max_ms": ms(lat[-1] if lat else None),
            "n": len(lat)}
