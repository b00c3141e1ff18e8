#!/usr/bin/env bash
# `cmake --install` into a scratch prefix, then C++ projects that use it the ways a consumer
# would: find_package(latch) with the client and the embedded server (built and run), a
# client-only consumer (no Lua or spdlog include path, no -Werror may reach it), pkg-config,
# and add_subdirectory of the source tree (FetchContent's way).
#
#   packaging_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
. "$(dirname "$0")/lib.sh"
dir="$(work_dir)"
prefix="$dir/prefix"
consumer="$source/tests/tools/consumer"
# The consumers build in Debug without debug info: what is checked is that they configure,
# compile, link and run, and -g makes the add_subdirectory build of latch's client the bulk
# of this test's time.
nodebug=-DCMAKE_CXX_FLAGS_DEBUG=-g0

cmake --build "$build" -j2 --target latchd latch-cli latch_server latch_testing latch_client latch_protocol \
  >"$dir/build.log" || { cat "$dir/build.log"; fail "building the installed targets"; }
cmake --install "$build" --prefix "$prefix" >"$dir/install.log"
for f in bin/latchd bin/latch-cli etc/latch/latchd.conf lib/systemd/system/latchd.service \
  share/man/man1/latchd.1 share/man/man1/latch-cli.1 include/latch/client.h \
  include/latch/lock.h include/latch/server.h include/latch/options.h \
  include/latch/protocol/reply_reader.h lib/liblatch_client.a lib/liblatch_protocol.a \
  lib/liblatch_server.a lib/liblatch_testing.a include/latch/testing/scoped_server.h \
  lib/cmake/latch/latchConfig.cmake \
  lib/cmake/latch/latchConfigVersion.cmake lib/cmake/latch/latchTargets.cmake \
  lib/pkgconfig/latch.pc; do
  [[ -e "$prefix/$f" ]] || fail "cmake --install did not install $f"
done
if grep -q 'Installing: /etc' "$dir/install.log"; then
  fail "installing into a scratch prefix wrote to /etc"
fi
"$prefix/bin/latchd" --version | grep -q '^latchd v=.* git=' || fail "latchd --version"

# find_package: client + embedded server, built and run.
cmake -S "$consumer" -B "$dir/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Debug "$nodebug" >"$dir/consumer.log" 2>&1 ||
  { cat "$dir/consumer.log"; fail "find_package(latch) consumer: configure"; }
cmake --build "$dir/consumer" -j2 >>"$dir/consumer.log" 2>&1 ||
  { cat "$dir/consumer.log"; fail "find_package(latch) consumer: build"; }
"$dir/consumer/embedded" >"$dir/embedded.out" || fail "embedded server consumer"
# Only the program's own line: the embedded server logs to its own logger (stderr), never
# through the host's default one (stdout).
[[ "$(cat "$dir/embedded.out")" == "embedded ok" ]] ||
  fail "embedded server consumer printed: $(cat "$dir/embedded.out")"
if grep -q -- '-Werror' "$dir/consumer/compile_commands.json"; then
  fail "-Werror reached a consumer"
fi

# The installed latchd serves the client-only program.
start_latchd "$prefix/bin/latchd"
[[ "$("$dir/consumer/client_only" "redis://127.0.0.1:$LATCHD_PORT")" == "client ok" ]] ||
  fail "client consumer against the installed latchd"

# latch::client alone: no Lua, spdlog or server headers on its compile line.
cmake -S "$consumer" -B "$dir/client" -DCMAKE_PREFIX_PATH="$prefix" -DCLIENT_ONLY=ON \
  >"$dir/client.log" 2>&1 || { cat "$dir/client.log"; fail "client-only consumer: configure"; }
cmake --build "$dir/client" -j2 >>"$dir/client.log" 2>&1 ||
  { cat "$dir/client.log"; fail "client-only consumer: build"; }
if grep -E -q 'lua|spdlog|server/include' "$dir/client/compile_commands.json"; then
  cat "$dir/client/compile_commands.json"
  fail "latch::client drags in Lua, spdlog or the server"
fi

# pkg-config (the client library).
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --exists latch || fail "pkg-config latch"
# shellcheck disable=SC2046
g++ -std=c++20 "$consumer/client_only.cpp" -o "$dir/pc_client" \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs latch) ||
  fail "building with pkg-config --cflags --libs latch"
[[ "$("$dir/pc_client" "redis://127.0.0.1:$LATCHD_PORT")" == "client ok" ]] ||
  fail "pkg-config consumer"

# add_subdirectory of the checkout: latch's tests, benchmarks and demo stay off.
cmake -S "$consumer" -B "$dir/subdir" -DLATCH_SOURCE_DIR="$source" -DCLIENT_ONLY=ON \
  -DCMAKE_BUILD_TYPE=Debug "$nodebug" >"$dir/subdir.log" 2>&1 ||
  { cat "$dir/subdir.log"; fail "add_subdirectory consumer: configure"; }
grep -q '^LATCH_BUILD_TESTS:BOOL=OFF' "$dir/subdir/CMakeCache.txt" ||
  fail "latch's tests are on in a consumer's build"
grep -q '^LATCH_WARNINGS_AS_ERRORS:BOOL=OFF' "$dir/subdir/CMakeCache.txt" ||
  fail "-Werror is on in a consumer's build"
cmake --build "$dir/subdir" -j2 --target client_only >>"$dir/subdir.log" 2>&1 ||
  { cat "$dir/subdir.log"; fail "add_subdirectory consumer: build"; }
[[ "$("$dir/subdir/client_only" "redis://127.0.0.1:$LATCHD_PORT")" == "client ok" ]] ||
  fail "add_subdirectory consumer"
echo "PASS: install, find_package, pkg-config and add_subdirectory consumers"
