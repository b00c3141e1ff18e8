#!/usr/bin/env bash
# The server's own suites (protocol, store/unit, wire; TSan: store/unit and wire) under a
# sanitizer, and a short libFuzzer run of the request parser. Part of CI after scripts/test.sh
# (which installs the dependencies); on its own: run scripts/deps.sh all first.
#
#   scripts/sanitize.sh                 ASan+UBSan, then 20 s of fuzzing
#   SANITIZE=thread scripts/sanitize.sh TSan instead
#   FUZZ_SECONDS=0 scripts/sanitize.sh  no fuzzing
#   LATCH_UNITY_BUILD=OFF ...           one compiler run per source (default: unity batches)
#   LATCH_STEPS=build|test ...          only the build, or only the suites and the fuzzing
#   LATCH_CMAKE_ARGS="-D..."            more cache settings, as for scripts/test.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
steps="${LATCH_STEPS:-all}"

sanitize="${SANITIZE:-address,undefined}"
build="build/sanitize-${sanitize//,/-}"
# Unity batches: the four targets build in about half the time (CMakeLists.txt says why the
# README's test command does not use them).
# -g1: line tables and function names, all that a sanitizer's stack trace prints; full -g
# costs compile and link time for variable info that nothing reads here.
if [[ "$steps" != test ]]; then
  read -r -a extra <<<"${LATCH_CMAKE_ARGS:-}"
  # Ninja and gold where installed, and the precompiled test header, as in scripts/test.sh.
  . scripts/build-env.sh
  latch_fast_build_args "$build"
  cmake -S . -B "$build" "${latch_build_args[@]}" -DCMAKE_BUILD_TYPE=Debug \
    -DLATCH_SANITIZE="$sanitize" -DLATCH_BUILD_BENCH=OFF -DLATCH_BUILD_DEMO=OFF \
    -DLATCH_BUILD_TESTS=ON -DLATCH_UNITY_BUILD="${LATCH_UNITY_BUILD:-ON}" \
    -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DLATCH_PRECOMPILE_HEADERS=ON ${extra[@]+"${extra[@]}"} >/dev/null
  # Only what the suites below run. TSan skips the protocol suite: the request parser and the
  # reply reader run on one thread, so TSan has nothing to find there (ASan+UBSan and the
  # fuzzer cover them); a suite not built is not run (its placeholder test has no label).
  targets=(latch_server_unit_tests latch_wire_tests latchd)
  if [[ "$sanitize" != *thread* ]]; then
    targets+=(latch_protocol_tests)
  fi
  build_start=$SECONDS
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
  echo "== sanitize.sh ($sanitize): build took $((SECONDS - build_start)) s"
fi
if [[ "$steps" == build ]]; then
  exit 0
fi
# Any sanitizer report fails the run.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# detect_deadlocks=0: its detector holds at most 64 locks per thread and aborts beyond (a
# script or EXEC holds every shard, 128 and more with many io-threads); lock order is ours to
# keep (shards by index, then the interpreter), data races are still reported.
export TSAN_OPTIONS="halt_on_error=1:detect_deadlocks=0"
ctest --test-dir "$build" --output-on-failure --no-tests=error -j2 --timeout 300 -L 'unit|wire'

seconds="${FUZZ_SECONDS:-20}"
if [[ "$seconds" != 0 ]]; then
  LATCH_FUZZ_BUILD="$root/build/fuzz" bash tests/fuzz/run.sh "$seconds"
fi
