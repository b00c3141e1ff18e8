"""What a report says about the machine, and how it prints numbers."""

import os
import platform


def fmt(v, spec="%.0f"):
    """A number for a table; '-' when missing."""
    return "-" if v is None else spec % v


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def machine():
    """CPU count and model, kernel, Python and the 1-minute load now. `model` and `cpu` are
    the same string (run.py reads the first, demo_load.py the second)."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "model": model, "cpu": model,
            "kernel": platform.release(), "python": platform.python_version(),
            "load_at_start": "%.2f" % loadavg()[0]}
