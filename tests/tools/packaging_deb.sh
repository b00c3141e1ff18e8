#!/usr/bin/env bash
# The Debian packages: `cpack -G DEB` in the build tree, their contents (dpkg-deb -c), control
# data (dependencies, conffiles, maintainer scripts), then both unpacked into a throwaway root
# (dpkg -x, nothing installed system-wide): latchd --version, latchd started from the
# packaged latchd.conf, the unit through systemd-analyze verify, and a find_package consumer
# built against the latch-dev files.
#
#   packaging_deb.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
. "$(dirname "$0")/lib.sh"
dir="$(work_dir)"

cmake --build "$build" -j2 --target latchd latch-cli latch_server latch_testing latch_client latch_protocol \
  >"$dir/build.log" || { cat "$dir/build.log"; fail "building the packaged targets"; }
(cd "$dir" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$dir/packages") \
  >"$dir/cpack.log" 2>&1 || { cat "$dir/cpack.log"; fail "cpack -G DEB"; }
server_deb="$(ls "$dir"/packages/latch-server_*.deb)"
dev_deb="$(ls "$dir"/packages/latch-dev_*.deb)"

dpkg-deb -c "$server_deb" | awk '{print $6}' >"$dir/server.list"
for f in ./usr/bin/latchd ./usr/bin/latch-cli ./etc/latch/latchd.conf \
  ./usr/lib/systemd/system/latchd.service ./usr/share/man/man1/latchd.1 \
  ./usr/share/man/man1/latch-cli.1; do
  grep -qx -- "$f" "$dir/server.list" || { cat "$dir/server.list"; fail "latch-server lacks $f"; }
done
if grep -q '^./usr/include' "$dir/server.list"; then fail "headers in latch-server"; fi
dpkg-deb -c "$dev_deb" | awk '{print $6}' >"$dir/dev.list"
for f in ./usr/include/latch/client.h ./usr/include/latch/server.h \
  ./usr/lib/liblatch_client.a ./usr/lib/liblatch_server.a ./usr/lib/liblatch_testing.a \
  ./usr/include/latch/testing/scoped_server.h ./usr/lib/cmake/latch/latchConfig.cmake \
  ./usr/lib/pkgconfig/latch.pc; do
  grep -qx -- "$f" "$dir/dev.list" || { cat "$dir/dev.list"; fail "latch-dev lacks $f"; }
done

[[ "$(dpkg-deb -f "$server_deb" Package)" == latch-server ]] || fail "package name"
depends="$(dpkg-deb -f "$server_deb" Depends)"
for d in adduser liblua5.1 libspdlog; do
  [[ "$depends" == *"$d"* ]] || fail "latch-server Depends lacks $d: $depends"
done
dpkg-deb -e "$server_deb" "$dir/control"
grep -qx /etc/latch/latchd.conf "$dir/control/conffiles" || fail "latchd.conf is not a conffile"
grep -q 'adduser --system' "$dir/control/postinst" || fail "postinst does not add the latch user"
[[ -x "$dir/control/postinst" ]] || fail "postinst is not executable"

mkdir -p "$dir/root"
dpkg -x "$server_deb" "$dir/root"
dpkg -x "$dev_deb" "$dir/root"
"$dir/root/usr/bin/latchd" --version | grep -q '^latchd v=.* git=' || fail "packaged latchd --version"
grep -q '^Type=notify' "$dir/root/usr/lib/systemd/system/latchd.service" || fail "unit Type"
start_latchd "$dir/root/usr/bin/latchd" # from the packaged binary...
port="$(free_port)" # ...and with the packaged configuration file
"$dir/root/usr/bin/latchd" "$dir/root/etc/latch/latchd.conf" --port "$port" >"$dir/conf.log" 2>&1 &
_started_pids+=($!)
wait_ready latchd "$port" "$!" "$dir/conf.log"

# A cluster node from its config file (issue 23): when latchd links libraft, the package
# depends on it, and three packaged latchd, each started from a file that includes the
# packaged latchd.conf and adds its raft-* lines (what an operator puts in
# /etc/latch/latchd.conf for the unit), elect one leader that takes a write.
if ldd "$dir/root/usr/bin/latchd" | grep -q 'libraft'; then
  [[ "$depends" == *libraft* ]] || fail "latch-server Depends lacks libraft: $depends"
  peers="" raft_ports=() client_ports=()
  for i in 1 2 3; do
    raft_ports+=("$(free_port)")
    client_ports+=("$(free_port)")
    peers+="$i=127.0.0.1:${raft_ports[i - 1]}:${client_ports[i - 1]} "
  done
  for i in 1 2 3; do
    mkdir -p "$dir/node$i"
    cat >"$dir/node$i.conf" <<CONF
include $dir/root/etc/latch/latchd.conf
port ${client_ports[i - 1]}
bind 127.0.0.1
dir $dir/node$i
raft-id $i
raft-peers "${peers% }"
CONF
    "$dir/root/usr/bin/latchd" "$dir/node$i.conf" >"$dir/node$i.log" 2>&1 &
    _started_pids+=($!)
    wait_ready "cluster node $i" "${client_ports[i - 1]}" "$!" "$dir/node$i.log"
  done
  leader=""
  for _ in $(seq 150); do  # bounded: 15 s for the first election
    for i in 1 2 3; do
      if [[ "$(timeout 2 redis-cli -p "${client_ports[i - 1]}" role 2>/dev/null | head -1)" == master ]]; then
        leader=${client_ports[i - 1]}
      fi
    done
    [[ -n "$leader" ]] && break
    sleep 0.1
  done
  [[ -n "$leader" ]] || { cat "$dir"/node*.log; fail "no leader among the packaged cluster nodes"; }
  ok=""
  for _ in $(seq 50); do  # the leader serves once its election barrier applied
    [[ "$(redis-cli -p "$leader" set lock:pkg me NX PX 30000)" == OK ]] && ok=1 && break
    sleep 0.1
  done
  [[ -n "$ok" ]] || fail "the packaged cluster's leader took no write"
  [[ -d "$dir/node1/raft" ]] || fail "raft-dir is not <dir>/raft"
fi

# systemd-analyze verify: the packaged unit, with its binary paths pointed at the unpacked
# root (the rest, e.g. /bin/kill and the targets it names, comes from this host).
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$dir/unit"
  sed "s|/usr/bin/latchd|$dir/root/usr/bin/latchd|g" \
    "$dir/root/usr/lib/systemd/system/latchd.service" >"$dir/unit/latchd.service"
  systemd-analyze verify --man=no "$dir/unit/latchd.service" >"$dir/verify.log" 2>&1 ||
    { cat "$dir/verify.log"; fail "systemd-analyze verify latchd.service"; }
  if [[ -s "$dir/verify.log" ]]; then
    cat "$dir/verify.log"
    fail "systemd-analyze verify printed warnings"
  fi
else
  echo "systemd-analyze not installed: unit not verified"
fi

# The latch-dev files are relocatable: a find_package consumer builds against the root.
cmake -S "$source/tests/tools/consumer" -B "$dir/consumer" -DCMAKE_PREFIX_PATH="$dir/root/usr" \
  -DCLIENT_ONLY=ON >"$dir/consumer.log" 2>&1 && cmake --build "$dir/consumer" -j2 \
  >>"$dir/consumer.log" 2>&1 || { cat "$dir/consumer.log"; fail "consumer of latch-dev"; }
[[ "$("$dir/consumer/client_only" "redis://127.0.0.1:$port")" == "client ok" ]] ||
  fail "latch-dev consumer against the packaged latchd"
echo "PASS: latch-server and latch-dev packages"
