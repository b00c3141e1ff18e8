"""A throw-away PostgreSQL server: initdb in a temp dir, postgres on 127.0.0.1 and a free
port (as the postgres user when we are root: initdb and postgres refuse root)."""

import os
import signal
import subprocess
import time

from .procs import Failure, Proc, as_postgres_kwargs, free_port, proc_cpu_jiffies


def find_pg_bindir(wanted=None):
    """/usr/lib/postgresql/<wanted>/bin if present, else the newest installed; None if none."""
    base = "/usr/lib/postgresql"
    versions = sorted((d for d in (os.listdir(base) if os.path.isdir(base) else [])
                       if d.isdigit()), key=int)
    if wanted and wanted in versions:
        return os.path.join(base, wanted, "bin")
    if versions:
        return os.path.join(base, versions[-1], "bin")
    return None


class Postgres:
    def __init__(self, bindir, tmp, durable, extra_settings=()):
        self.bindir = bindir
        self.tmp = tmp
        self.durable = durable
        self.extra_settings = list(extra_settings)  # more `-c name=value`, e.g. for profiling
        self.kw = as_postgres_kwargs()
        self.data = os.path.join(tmp, "pgdata")
        self.proc = None
        self.port = None

    def start(self):
        log = os.path.join(self.tmp, "initdb.log")
        with open(log, "wb") as f:
            p = subprocess.run([os.path.join(self.bindir, "initdb"), "-D", self.data, "-U",
                                "latch", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                               stdout=f, stderr=subprocess.STDOUT, cwd="/tmp", timeout=120,
                               **self.kw)
        if p.returncode != 0:
            with open(log, errors="replace") as f:
                raise Failure("initdb failed:\n" + f.read()[-1500:])
        settings = ["listen_addresses=127.0.0.1", "unix_socket_directories=" + self.tmp,
                    "max_connections=200", "dynamic_shared_memory_type=mmap",
                    "log_min_messages=warning"]
        if not self.durable:  # what the demo's tests use
            settings += ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
        settings += self.extra_settings
        self.settings = settings
        for _ in range(3):  # a free port can be taken between picking and binding it
            self.port = free_port()
            argv = [os.path.join(self.bindir, "postgres"), "-D", self.data, "-p", str(self.port)]
            for s in settings:
                argv += ["-c", s]
            self.proc = Proc("postgres", argv, os.path.join(self.tmp, "postgres.log"),
                             stop_signal=signal.SIGINT, **self.kw)  # SIGINT: fast shutdown
            if self.ready(30):
                return
            self.proc.stop()
            tail = self.proc.log_tail()
            if "could not bind" not in tail and "in use" not in tail:
                break
        raise Failure("postgres did not start:\n" + self.proc.log_tail())

    def ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.proc.alive():
                return False
            r = subprocess.run([os.path.join(self.bindir, "pg_isready"), "-q", "-h", "127.0.0.1",
                                "-p", str(self.port), "-t", "2"], timeout=10)
            if r.returncode == 0:
                return True
            time.sleep(0.1)
        return False

    def createdb(self, name):
        p = subprocess.run([os.path.join(self.bindir, "createdb"), "-h", "127.0.0.1", "-p",
                            str(self.port), "-U", "latch", name], capture_output=True, text=True,
                           timeout=60)
        if p.returncode != 0:
            raise Failure("createdb %s failed: %s" % (name, p.stderr.strip()))

    def conninfo(self, db):
        return "host=127.0.0.1 port=%d dbname=%s user=latch" % (self.port, db)

    def cpu(self):
        return proc_cpu_jiffies(self.proc.pid, children_of=True) if self.proc else 0

    def stop(self):
        if self.proc:
            self.proc.stop(timeout=15)


