#!/usr/bin/env bash
# Runs Redis's own test files (tests/unit/*.tcl of a Redis 7.0 source tree) in external mode
# against redis-server and against latchd, one fresh server per file, and prints per file how
# many tests pass on each and which tests pass on Redis but not on latchd. A measurement of
# drop-in breadth, not part of the suite: the Redis sources are not in this repository.
#
#   git clone --depth 1 -b 7.0.15 https://github.com/redis/redis /tmp/redis-7.0.15
#   scripts/redis_testsuite.sh /tmp/redis-7.0.15 [unit/type/string unit/expire ...]
#
# Needs tclsh (Debian: tcl), redis-server and redis-cli. LATCHD picks the binary (default
# build/test/server/latchd); RESULTS the output directory (default build/redis-testsuite).
# The harness runs with --singledb (latchd serves database 0 only), --durable (a test that
# errors is counted as failed and the file goes on), --ignore-encoding and --ignore-digest
# (encodings and DEBUG DIGEST are Redis internals), and without the tests tagged needs:repl
# (latchd does not replicate; their helper waits for ever on a SYNC stream latchd refuses).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
redis_src="${1:?usage: $0 <redis-7.0-source-dir> [units...]}"
shift
units=("$@")
[[ ${#units[@]} -eq 0 ]] && units=(unit/type/string unit/type/incr unit/type/hash unit/type/zset
  unit/expire unit/keyspace unit/multi unit/pubsub)
latchd="${LATCHD:-$root/build/test/server/latchd}"
results="${RESULTS:-$root/build/redis-testsuite}"
mkdir -p "$results" "$redis_src/src"
# The harness runs helpers from src/: point them at the installed binaries.
for tool in redis-cli redis-server redis-benchmark redis-check-aof redis-check-rdb; do
  [[ -e "$redis_src/src/$tool" ]] || ln -s "$(command -v "$tool")" "$redis_src/src/$tool"
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A guard for unit/multi's "... and script timeout" tests: if a script keeps latchd BUSY for
# 20 s (the suite's own SCRIPT KILL did not come), this kills it from a connection of its own
# so the file goes on; those tests then fail. Latchd runs scripts on a script thread since
# 2026-12-02, so the suite's SCRIPT KILL is answered and the guard should not fire. Not
# started for other files: its connections would show in their client counts.
busy_watchdog() {
  local port=$1 busy=0
  while sleep 2; do
    # BUSY, or no answer at all (this connection landed on the script's thread).
    if ! timeout 1 redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
      busy=$((busy + 2))
      if ((busy >= 20)); then
        for _ in 1 2 3 4; do
          timeout 1 redis-cli -p "$port" script kill >/dev/null 2>&1 && break
        done
        busy=0
      fi
    else
      busy=0
    fi
  done
}

# run_one <redis|latchd> <unit>: writes $results/<server>-<unit>.res (one line per test).
run_one() {
  local server=$1 unit=$2 port pid name
  name="$server-${unit//\//_}"
  port=$(free_port)
  if [[ $server == redis ]]; then
    redis-server --port "$port" --bind 127.0.0.1 --save '' --enable-debug-command yes \
      --logfile /dev/null --dir "$results" &
  else
    "$latchd" --port "$port" --bind 127.0.0.1 --enable-debug-command yes --loglevel warning \
      --dir "$results" &
  fi
  pid=$!
  for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  local watchdog=""
  if [[ $server == latchd && $unit == unit/multi ]]; then
    busy_watchdog "$port" &
    watchdog=$!
  fi
  (cd "$redis_src" && timeout 900 tclsh tests/test_helper.tcl --host 127.0.0.1 --port "$port" \
    --single "$unit" --clients 1 --singledb --durable --ignore-encoding --ignore-digest --tags -needs:repl 2>&1) |
    sed 's/\x1b\[[0-9;]*m//g' >"$results/$name.log"
  [[ -n $watchdog ]] && kill "$watchdog" 2>/dev/null
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  grep -E '^\[(ok|err|exception)\]' "$results/$name.log" |
    sed -E 's/ \([0-9]+ ms\)$//; s/ in tests\/unit\/.*$//' >"$results/$name.res"
}

printf '%-20s %8s %8s %s\n' unit redis latchd "passing on Redis, not on latchd"
for unit in "${units[@]}"; do
  run_one redis "$unit"
  run_one latchd "$unit"
  r="$results/redis-${unit//\//_}.res"
  l="$results/latchd-${unit//\//_}.res"
  # Counted by test name on both sides (a few names recur, e.g. per encoding in zset.tcl).
  ok_redis=$(grep '^\[ok\]' "$r" | sort -u | wc -l)
  ok_both=$(comm -12 <(grep '^\[ok\]' "$r" | sort -u) <(grep '^\[ok\]' "$l" | sort -u) | wc -l)
  comm -23 <(grep '^\[ok\]' "$r" | sort -u) <(grep '^\[ok\]' "$l" | sort -u) |
    sed 's/^\[ok\]: //' >"$results/missing-${unit//\//_}.txt"
  printf '%-20s %8s %8s %s\n' "$unit" "$ok_redis" "$ok_both" "$results/missing-${unit//\//_}.txt"
done
