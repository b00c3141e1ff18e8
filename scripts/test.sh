#!/usr/bin/env bash
# README command 2: installs what the build and the tests need, builds everything (Debug:
# assertions on, quickest to compile) in build/test, and runs the whole ctest suite. Exits non-zero on any
# failure. Nothing needs to be running beforehand: the tests start their own redis-server and
# latchd processes on free loopback ports (a redis-server that the Debian package may have
# started on 6379 is never used).
#
#   scripts/test.sh              everything but the soak (scripts/soak.sh)
#   scripts/test.sh -L unit      extra arguments go to ctest (here: the quick unit run)
#   LATCH_STEPS=build|test ...   only the deps and the build, or only the suite (.ci/run)
#   LATCH_CMAKE_ARGS="-D..."     more cache settings (.ci/run's; word-split, no spaces inside one)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
steps="${LATCH_STEPS:-all}"

if [[ "$steps" != test ]]; then
  bash scripts/deps.sh all
  read -r -a extra <<<"${LATCH_CMAKE_ARGS:-}"
  # One file per compiler run (no unity batches): the suites test the code as it ships.
  cmake -S . -B build/test -DCMAKE_BUILD_TYPE=Debug -DLATCH_BUILD_TESTS=ON \
    -DLATCH_BUILD_BENCH="${LATCH_BUILD_BENCH:-ON}" -DLATCH_UNITY_BUILD=OFF ${extra[@]+"${extra[@]}"}
  build_start=$SECONDS
  cmake --build build/test -j"$(nproc)"
  echo "== test.sh: build took $((SECONDS - build_start)) s"
fi
if [[ "$steps" != build ]]; then
  # Two tests at a time: each may run a server with two io threads beside the test process.
  # A test that hangs is stopped after 300 s and counted as failed. The soak (label soak,
  # 10^6 grants per mode) is left out: scripts/soak.sh runs it.
  ctest --test-dir build/test --output-on-failure --no-tests=error -j2 --timeout 300 -LE soak "$@"
fi
