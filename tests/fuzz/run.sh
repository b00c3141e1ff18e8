#!/usr/bin/env bash
# Builds the request parser fuzzer with clang and runs it.
# Usage: tests/fuzz/run.sh [seconds]      (default 30)
# Env:   LATCH_FUZZ_BUILD  build folder (default <repo>/build-fuzz)
#        CXX               clang++ to use (default: clang++-14, else clang++)
# Exit status is libFuzzer's: non-zero when it found a crash or a disagreement; the
# input that did it is saved as crash-* in the build folder.
set -euo pipefail

seconds="${1:-30}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${LATCH_FUZZ_BUILD:-$root/build-fuzz}"
if [[ -z "${CXX:-}" ]]; then
  if command -v clang++-14 >/dev/null; then CXX=clang++-14
  elif command -v clang++ >/dev/null; then CXX=clang++
  else echo "run.sh: clang is needed: apt-get install clang-14" >&2; exit 2
  fi
fi

cmake -S "$root/tests/fuzz" -B "$build" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target latch_request_parser_fuzz -j2

corpus="$build/corpus"
mkdir -p "$corpus"
# A few well-formed seeds so the fuzzer starts from real requests (limits byte, 8 seed
# bytes, then the stream).
printf '\0\0\0\0\0\0\0\0\1*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n' >"$corpus/seed-multibulk"
printf '\1\0\0\0\0\0\0\0\2SET "a\\x41" '"'"'b\\'"'"'c'"'"'\n\r\n*0\r\n' >"$corpus/seed-inline"

cd "$build"
exec ./latch_request_parser_fuzz -max_total_time="$seconds" -max_len=4096 \
  -print_final_stats=1 "$corpus"
