#!/usr/bin/env bash
# README command 2: installs what the build and the tests need, builds the server, its tests and
# the demo (Debug: assertions on, quickest to compile; no benchmarks) in build/test, and runs
# the whole ctest suite. Exits non-zero on any failure. Nothing needs to be running beforehand:
# the tests start their own redis-server and latchd processes on free loopback ports (a
# redis-server that the Debian package may have started on 6379 is never used).
#
#   scripts/test.sh              everything but the soak (scripts/soak.sh)
#   scripts/test.sh -L unit      extra arguments go to ctest (here: the quick unit run)
#   LATCH_STEPS=build|test ...   only the deps and the build, or only the suite (.ci/run)
#   LATCH_CMAKE_ARGS="-D..."     more cache settings (.ci/run's; word-split, no spaces inside one)
#   LATCH_UNITY_BUILD=OFF ...    one file per compiler run (slower from scratch; quicker to
#                                rebuild after editing one file)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
steps="${LATCH_STEPS:-all}"

if [[ "$steps" != test ]]; then
  bash scripts/deps.sh all
  read -r -a extra <<<"${LATCH_CMAKE_ARGS:-}"
  # The quick settings (issue 25: build and tests within six minutes on a fresh two-core
  # clone), each a cache setting that LATCH_CMAKE_ARGS can override:
  # - Ninja and gold where installed (scripts/build-env.sh);
  # - -g1: line tables and function names (what gdb's and a sanitizer's backtraces print);
  #   full -g costs compile time and most of the link time;
  # - the common std headers precompiled once for the server library, and with GoogleTest once
  #   for every test executable (LATCH_PRECOMPILE_HEADERS; with ccache as the launcher, pass
  #   -DLATCH_PRECOMPILE_HEADERS=OFF or set ccache's sloppiness=pch_defines,time_macros);
  # - the server's, the client's and the suites' sources in unity batches (LATCH_UNITY_BUILD,
  #   about half the build): the build that ships (CMakeLists.txt says why it is safe);
  # - no benchmarks (LATCH_BUILD_BENCH=ON builds them here; .ci/run does, once).
  . scripts/build-env.sh
  latch_fast_build_args build/test
  cmake -S . -B build/test "${latch_build_args[@]}" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DLATCH_BUILD_TESTS=ON \
    -DLATCH_BUILD_BENCH="${LATCH_BUILD_BENCH:-OFF}" \
    -DLATCH_UNITY_BUILD="${LATCH_UNITY_BUILD:-ON}" \
    -DLATCH_PRECOMPILE_HEADERS=ON \
    ${extra[@]+"${extra[@]}"}
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
