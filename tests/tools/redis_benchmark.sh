#!/usr/bin/env bash
# redis-benchmark against latchd: the standard SET/GET/INCR tests and the lock acquire
# pattern (SET NX PX on random keys) run to completion with no error reply.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
start_latchd "$1"

# bench LINES ARGS...: runs redis-benchmark quietly (it stops at the first error reply),
# checks the exit status, that each test printed its requests-per-second line and that no
# error appeared.
bench() {
  local expected_lines=$1
  shift
  local output
  output="$(timeout 180 redis-benchmark -p "$LATCHD_PORT" -q "$@" 2>&1)" ||
    fail "redis-benchmark $* exited with $?: $output"
  # -q prints progress with carriage returns; keep the final lines only.
  output="$(tr '\r' '\n' <<<"$output" | grep -v '^\s*$' | grep -v ': rps=' || true)"
  echo "$output"
  # "WARNING: Could not fetch server CONFIG" means CONFIG GET save/appendonly did not answer
  # as Redis does: an incompatibility too.
  if grep -qiE 'error|ERR |WRONG|NOAUTH|WARNING' <<<"$output"; then
    fail "redis-benchmark $*: error or warning in output"
  fi
  local lines
  lines="$(grep -c 'requests per second' <<<"$output" || true)"
  ((lines == expected_lines)) ||
    fail "redis-benchmark $*: expected $expected_lines 'requests per second' lines, got $lines"
}

bench 3 -t set,get,incr -n 20000
bench 1 -n 20000 -r 100000 SET lock:__rand_int__ v NX PX 10000

cli() { timeout 10 redis-cli -p "$LATCHD_PORT" "$@"; }
# redis-benchmark's SET writes key:__rand_int__ -> with no -r a single "key:__rand_int__".
[[ "$(cli get counter:__rand_int__)" == 20000 ]] ||
  fail "INCR counter: expected 20000, got $(cli get counter:__rand_int__)"
locks="$(cli --scan --pattern 'lock:*' | wc -l)"
((locks > 1000)) || fail "expected many lock:* keys after the NX PX run, got $locks"
echo "PASS: redis-benchmark"
