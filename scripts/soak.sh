#!/usr/bin/env bash
# Beyond CI: the lock soak and repeated chaos runs, on the build scripts/test.sh made
# (build/test; built first if missing). Exits non-zero on any failure.
#
#   scripts/soak.sh               the soak (ctest -L soak): each durability mode (appendfsync
#                                 always and everysec, lock-restart-delay = TTL, none) to
#                                 LATCH_SOAK_GRANTS grants (default 1000000) under kill -9,
#                                 SIGSTOP and client pauses; minutes per mode on two cores
#   scripts/soak.sh chaos 50      every chaos test (ctest -L chaos) 50 times, one at a time,
#                                 going on after a failure; prints passes per test
#   LATCH_SOAK_CLIENTS=n, LATCH_SOAK_MAX_SECONDS=s, LATCH_CHAOS_SECONDS=s tune the runs
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build=build/test

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  LATCH_STEPS=build bash scripts/test.sh
fi
cmake --build "$build" -j"$(nproc)" --target latchd latch_durability_tests

case "${1:-soak}" in
  soak)
    # One mode at a time: the grant rate is what the machine gives one latchd and its clients.
    ctest --test-dir "$build" --output-on-failure --no-tests=error -L soak -V |
      grep -E '^[0-9]+: \[(soak|chaos)\]|Test +#|tests passed|tests failed|Failure' ;
    exit "${PIPESTATUS[0]}"
    ;;
  chaos)
    runs="${2:-50}"
    [[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/soak.sh chaos <runs>" >&2; exit 2; }
    log="$build/soak-chaos.log"
    : >"$log"
    declare -A passed=() failed=()
    for ((i = 1; i <= runs; i++)); do
      # ctest prints "n/m Test #k: <name> ....   Passed" (or ***Failed) per test.
      while read -r name verdict; do
        if [[ "$verdict" == Passed ]]; then
          passed[$name]=$((${passed[$name]:-0} + 1))
        else
          failed[$name]=$((${failed[$name]:-0} + 1))
        fi
      done < <(ctest --test-dir "$build" -V -L chaos -R '^ChaosTest\.' \
                 --timeout 300 2>&1 | tee -a "$log" |
               sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+ *(\*\*\*)?([A-Za-z]+).*/\1 \3/p')
      echo "== chaos run $i of $runs done"
    done
    status=0
    for name in $(printf '%s\n' "${!passed[@]}" "${!failed[@]}" | sort -u); do
      echo "$name: ${passed[$name]:-0} passed, ${failed[$name]:-0} failed of $runs"
      [[ "${failed[$name]:-0}" == 0 ]] || status=1
    done
    echo "(the runs' output: $log; grep '\\[chaos\\]' for each run's counts)"
    exit "$status"
    ;;
  *)
    echo "usage: scripts/soak.sh [soak | chaos <runs>]" >&2
    exit 2
    ;;
esac
