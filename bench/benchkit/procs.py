"""Child processes of a benchmark: free loopback ports, processes in their own group (so that
stopping one stops all it started), and CPU time from /proc."""

import os
import signal
import socket
import subprocess
import time


class Failure(Exception):
    """Something needed is missing or did not start: the message says what to do."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres_kwargs():
    """Popen arguments that run a child as the postgres user when we are root (initdb and
    postgres refuse root), like demo/reservation/run.sh's `runuser -u postgres --`."""
    if os.geteuid() != 0:
        return {}
    import pwd
    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        raise Failure("running as root, but there is no `postgres` user to run PostgreSQL as "
                      "(apt-get install postgresql)")
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}


class Proc:
    """A child in its own process group (so that stopping it stops everything it started)."""

    def __init__(self, name, argv, log_path, stop_signal=signal.SIGTERM, stdout_pipe=False,
                 **popen):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.stop_signal = stop_signal
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE if stdout_pipe else self.log,
                                     stderr=self.log, start_new_session=True, cwd="/tmp",
                                     **popen)
        self.pid = self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def log_tail(self, n=1500):
        try:
            with open(self.log_path, "rb") as f:
                data = f.read()
            return data[-n:].decode(errors="replace").strip()
        except OSError:
            return ""

    def stop(self, timeout=10):
        if self.proc.poll() is None:
            for sig in (self.stop_signal, signal.SIGKILL):
                try:
                    os.killpg(self.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(timeout=timeout)
                    break
                except subprocess.TimeoutExpired:
                    continue
        # Anything left in the group (a postgres backend, say): no survivors.
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        if self.proc.stdout:
            self.proc.stdout.close()
        self.log.close()


def proc_cpu_jiffies(pid, children_of=False):
    """utime+stime of pid (+ cutime+cstime and every live child's when children_of)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    total = int(fields[11]) + int(fields[12])
    if not children_of:
        return total
    total += int(fields[13]) + int(fields[14])
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                cf = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(cf[1]) == pid:
            total += int(cf[11]) + int(cf[12])
    return total


def machine_busy_jiffies():
    """Busy jiffies of the whole machine (every CPU), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]) - v[3] - v[4]  # minus idle and iowait


def wait_port(port, proc, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not proc.alive():
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False



def proc_cpu_seconds(pid):
    """utime + stime of one process, in seconds."""
    return proc_cpu_jiffies(pid) / os.sysconf("SC_CLK_TCK")
