#!/usr/bin/env bash
# README command 1: installs what the build needs, builds latchd in Release and runs it with
# conf/latchd.conf (127.0.0.1:6380). Extra arguments are passed to latchd as directives:
#   scripts/start-server.sh --port 7000 --loglevel verbose
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/deps.sh build
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release \
  -DLATCH_BUILD_TESTS=OFF -DLATCH_BUILD_BENCH=OFF >/dev/null
cmake --build build/release --target latchd -j"$(nproc)"
exec build/release/server/latchd conf/latchd.conf "$@"
