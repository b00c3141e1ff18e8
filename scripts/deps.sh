#!/usr/bin/env bash
# Installs the Debian 12 packages that latch needs, and nothing when they are all present
# (so a second run costs a few dpkg look-ups).
#
#   scripts/deps.sh build   what the build needs (compiler, cmake, libraries)
#   scripts/deps.sh demo    what demo/reservation/run.sh needs: latchd's and the service's
#                           build (no test or benchmark libraries), PostgreSQL, redis-server
#   scripts/deps.sh [all]   the build plus what the test suites need (redis-server, PostgreSQL,
#                           Chromium, ...)
#
# As root it runs apt-get itself; otherwise it prints the exact command to run and exits 1.
set -euo pipefail

BUILD_PACKAGES=(
  cmake g++ pkg-config
  libboost1.81-dev robin-map-dev libspdlog-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libxxhash-dev
  libpq-dev libssl-dev
  libraft-dev libuv1-dev  # latch_cluster (Raft, docs/CLUSTER.md); not linked into latchd yet
  liburing-dev  # io-engine uring (docs/design/io_engine.md); latchd builds without it
)
# Test-only: the differential test and the tool tests run real redis-server, redis-cli and
# redis-benchmark; the compat tests use redis-py and Node.js clients; scripts/sanitize.sh
# fuzzes the parser with clang's libFuzzer; the reservation demo's tests run their own
# PostgreSQL server (initdb + postgres from the postgresql package); the packaging test runs
# cpack -G DEB, which needs dpkg-shlibdeps (dpkg-dev) and file(1) (systemd-analyze verifies the
# unit where the systemd package is installed); the demo's page test drives headless Chromium.
# The TLS tests make their certificates at run time with the openssl CLI. CI's builds use
# Ninja (.ci/run; not the image's or a user's build, so not a build package); gold comes with g++.
# The reservation demo (demo/reservation/run.sh): latchd and latch-reservation in Release, no
# tests or benchmarks, then PostgreSQL and (for `run.sh redis`) redis-server to run against.
DEMO_PACKAGES=(
  cmake g++ pkg-config
  libboost1.81-dev robin-map-dev libspdlog-dev
  liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libxxhash-dev
  libpq-dev libssl-dev
  postgresql redis-server
)
TEST_PACKAGES=(
  redis-server redis-tools
  postgresql chromium
  python3 python3-redis python3-pytest python3-prometheus-client
  nodejs npm
  clang-14 libclang-rt-14-dev
  dpkg-dev file
  openssl
  faketime
  ninja-build
)

case "${1:-all}" in
  build) wanted=("${BUILD_PACKAGES[@]}") ;;
  demo) wanted=("${DEMO_PACKAGES[@]}") ;;
  all | test) wanted=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  *)
    echo "usage: $0 [build|demo|all]" >&2
    exit 2
    ;;
esac

installed() {
  local package=$1
  if [[ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" == installed ]]; then
    return 0
  fi
  # NodeSource's nodejs package ships npm itself and conflicts with Debian's npm package:
  # a working npm (or node) on the PATH satisfies the requirement either way.
  case "$package" in
    npm) command -v npm >/dev/null 2>&1 ;;
    nodejs) command -v node >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}

missing=()
for package in "${wanted[@]}"; do
  installed "$package" || missing+=("$package")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

if ((EUID != 0)); then
  echo "latch needs these Debian packages: ${missing[*]}" >&2
  echo "install them with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Packages such as redis-server and postgresql start a system service on install where an
# init system runs. The tests never use it (they start their own servers on free loopback
# ports), so it is harmless; it is only kept from failing the install where no init runs.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}" >&2
