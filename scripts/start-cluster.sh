#!/usr/bin/env bash
# A latch cluster on this machine (docs/CLUSTER.md): builds latchd in Release as
# scripts/start-server.sh does, starts NODES latchd processes on 127.0.0.1 as one Raft
# cluster, waits until a leader acknowledges a write, prints how to reach it, and stops every
# node on Ctrl-C. A node that exits meanwhile (try kill -9 on the leader) leaves the others
# serving, and its restart command is printed.
#
#   scripts/start-cluster.sh                  3 nodes: clients on 6380-6382, Raft on 7380-7382
#   scripts/start-cluster.sh 5 7000           5 nodes: clients on 7000-7004, Raft on 8000-8004
#                                             (or NODES=5 BASE_PORT=7000 in the environment)
#   LATCHD=build/test/server/latchd ...       that binary instead of building one
#   CLUSTER_DIR=/var/tmp/latch ...            where each node keeps its Raft log
#                                             (default: build/cluster/nodeN; kept across runs)
# Arguments after N and BASEPORT are passed to every node as directives, e.g.
# `scripts/start-cluster.sh 3 6380 --raft-election-timeout 600`.
# Clients reach the leader through any node's SENTINEL (name `latch`): redis-py's Sentinel,
# ioredis `sentinels:`, or `redis-cli -p 6380 SENTINEL get-master-addr-by-name latch`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
nodes="${NODES:-3}"
base="${BASE_PORT:-6380}"
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  nodes=$1
  shift
  if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    base=$1
    shift
  fi
fi
raft_base=$((base + 1000))
data="${CLUSTER_DIR:-$root/build/cluster}"
[[ "$nodes" =~ ^[1-9][0-9]?$ ]] || { echo "NODES must be 1-99, not '$nodes'" >&2; exit 2; }
if ! [[ "$base" =~ ^[0-9]+$ ]] || (( base < 1024 || raft_base + nodes > 65536 )); then
  echo "BASE_PORT must leave room for $nodes client ports and $nodes Raft ports 1000 above" \
    "them (1024-$((65536 - 1000 - nodes))), not '$base'" >&2
  exit 2
fi

latchd="${LATCHD:-}"
if [[ -z "$latchd" ]]; then
  bash scripts/deps.sh build
  . scripts/build-env.sh
  latch_fast_build_args build/release
  cmake -S . -B build/release "${latch_build_args[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DLATCH_BUILD_TESTS=OFF -DLATCH_BUILD_BENCH=OFF >/dev/null
  cmake --build build/release --target latchd -j"$(nproc)"
  latchd=build/release/server/latchd
fi
command -v redis-cli >/dev/null || { echo "needs redis-cli (apt-get install redis-tools)" >&2; exit 2; }

peers=""
for i in $(seq 1 "$nodes"); do
  peers+="$i=127.0.0.1:$((raft_base + i - 1)):$((base + i - 1)) "
done
peers="${peers% }"

pids=()
stop_all() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_all EXIT
trap 'exit 130' INT TERM

for i in $(seq 1 "$nodes"); do
  dir="$data/node$i"
  mkdir -p "$dir"
  "$latchd" --port "$((base + i - 1))" --bind 127.0.0.1 --dir "$dir" --raft-id "$i" \
    --raft-peers "$peers" --raft-dir "$dir" "$@" >"$dir/latchd.log" 2>&1 &
  pids+=($!)
done

# A leader that acknowledges a write (bounded: 30 s).
leader=""
for _ in $(seq 300); do
  for i in $(seq 1 "$nodes"); do
    port=$((base + i - 1))
    if ! kill -0 "${pids[$((i - 1))]}" 2>/dev/null; then
      echo "node $i exited at start-up:" >&2
      tail -20 "$data/node$i/latchd.log" >&2
      exit 1
    fi
    if [[ "$(timeout 2 redis-cli -p "$port" ROLE 2>/dev/null | head -1)" == master ]] &&
      [[ "$(timeout 2 redis-cli -p "$port" SET latch:cluster:ready 1 PX 1000 2>/dev/null)" == OK ]]; then
      leader=$port
      break 2
    fi
  done
  sleep 0.1
done
[[ -n "$leader" ]] || { echo "no leader acknowledged a write within 30 s (logs: $data/node*/latchd.log)" >&2; exit 1; }

echo "latch cluster of $nodes node(s): clients on 127.0.0.1:$base-$((base + nodes - 1)), leader on $leader"
echo "  redis-cli -p $base SENTINEL get-master-addr-by-name latch"
echo "  redis-cli -p $leader SET lock:a me NX PX 30000"
echo "logs and Raft logs in $data/node*/; Ctrl-C stops every node"
# Until Ctrl-C. A node that exits (kill -9 to try a failover, a fault) leaves the others
# serving, as a machine lost in a real cluster would; how to start it again is printed.
set +e
live=("${pids[@]}")
while ((${#live[@]} > 0)); do
  wait -n -p gone "${live[@]}"
  status=$?
  for i in $(seq 1 "$nodes"); do
    [[ "${pids[$((i - 1))]}" == "$gone" ]] || continue
    echo "node $i (port $((base + i - 1))) exited with status $status; the others go on." \
      "To start it again: $latchd --port $((base + i - 1)) --bind 127.0.0.1" \
      "--dir $data/node$i --raft-id $i --raft-peers '$peers' --raft-dir $data/node$i" >&2
  done
  # Only the nodes still running: `wait` on one already reaped prints "no such job".
  rest=()
  for pid in "${live[@]}"; do [[ "$pid" == "$gone" ]] || rest+=("$pid"); done
  live=("${rest[@]+"${rest[@]}"}")
done
exit "$status"
