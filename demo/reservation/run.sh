#!/usr/bin/env bash
# Runs the reservation demo with everything it needs, on 127.0.0.1 only:
#   demo/reservation/run.sh            against latchd
#   demo/reservation/run.sh redis      against redis-server (the same service, another URL)
#   PORT=8080 demo/reservation/run.sh  a fixed HTTP port (default: a free one)
#   LATCH_BUILD_DIR=build/test ...     use (and build in) an already configured build dir
# Installs only what the demo needs (scripts/deps.sh demo: the build of latchd and the service,
# PostgreSQL, redis-server; no test tools), builds latchd and latch-reservation in Release
# (build/release, as scripts/start-server.sh), starts PostgreSQL in a temp dir on a free port
# (as the postgres user when run as root: initdb and postgres refuse root), the lock server on a
# free port, then the service, and prints the seat map's URL (open it in a browser). The
# service's access log (one line per request) goes to the terminal. Ctrl-C stops everything
# and removes the temp dir.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
backend="${1:-latchd}"
case "$backend" in
  latchd | redis) ;;
  *)
    echo "usage: $0 [latchd|redis]" >&2
    exit 2
    ;;
esac

bash scripts/deps.sh demo
build="${LATCH_BUILD_DIR:-build/release}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DLATCH_BUILD_TESTS=OFF -DLATCH_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$build" --target latchd latch-reservation -j"$(nproc)"

pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
tmp="$(mktemp -d /tmp/latch-reservation-XXXXXX)"
as_pg=()
if ((EUID == 0)); then
  chown postgres: "$tmp"
  as_pg=(runuser -u postgres --)
fi

# A port nobody listens on right now (the server binding it may still lose a race: rerun).
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

wait_for_port() {
  for _ in $(seq 500); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.02
  done
  echo "nothing answers on port $1" >&2
  return 1
}

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ -f "$tmp/data/postmaster.pid" ]]; then
    "${as_pg[@]}" "$pgbin/pg_ctl" -D "$tmp/data" -m fast -w stop >/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pg_port="$(free_port)"
"${as_pg[@]}" "$pgbin/initdb" -D "$tmp/data" -U latch -A trust -E UTF8 --locale=C --no-sync \
  >"$tmp/initdb.log"
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$tmp/data" -l "$tmp/postgres.log" -w -o \
  "-p $pg_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$tmp" start >/dev/null
"${as_pg[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$pg_port" -U latch tickets
echo "PostgreSQL: host=127.0.0.1 port=$pg_port dbname=tickets user=latch (data in $tmp)"

lock_port="$(free_port)"
if [[ "$backend" == latchd ]]; then
  "$build/server/latchd" --port "$lock_port" --bind 127.0.0.1 --loglevel warning &
else
  redis-server --port "$lock_port" --bind 127.0.0.1 --save '' --appendonly no \
    --loglevel warning &
fi
pids+=($!)
wait_for_port "$lock_port"
echo "lock server ($backend): redis://127.0.0.1:$lock_port"

# It prints "listening on http://127.0.0.1:PORT" and "seat map: http://127.0.0.1:PORT/ ...".
"$build/demo/reservation/latch-reservation" \
  --pg "host=127.0.0.1 port=$pg_port dbname=tickets user=latch" \
  --lock-url "redis://127.0.0.1:$lock_port" --port "${PORT:-0}" &
pids+=($!)
wait "${pids[-1]}"
