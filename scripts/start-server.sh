#!/usr/bin/env bash
# README command 1: installs what the build needs, builds latchd in Release and runs it with
# conf/latchd.conf (127.0.0.1:6380). Extra arguments are passed to latchd as directives:
#   scripts/start-server.sh --port 7000 --loglevel verbose
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/deps.sh build
# A first build in minutes on two cores: the server library in unity batches
# (LATCH_UNITY_BUILD, CMakeLists.txt), which parses the shared headers (the standard library,
# Asio, spdlog) once a batch instead of once a file; Ninja and gold where installed
# (scripts/build-env.sh). Every suite (scripts/test.sh, scripts/sanitize.sh) runs against
# unity-built servers too.
. scripts/build-env.sh
latch_fast_build_args build/release
cmake -S . -B build/release "${latch_build_args[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DLATCH_BUILD_TESTS=OFF -DLATCH_BUILD_BENCH=OFF \
  -DLATCH_UNITY_BUILD=ON >/dev/null
cmake --build build/release --target latchd -j"$(nproc)"
exec build/release/server/latchd conf/latchd.conf "$@"
