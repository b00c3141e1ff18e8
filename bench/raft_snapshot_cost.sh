#!/bin/bash
# How long a Raft snapshot blocks a node's Raft thread (docs/CLUSTER.md, "Snapshots"):
# three latchd nodes on loopback, KEYS keys loaded through the leader with redis-cli --pipe
# (half with a TTL), then 2 x THRESHOLD single SETs so that every node passes the threshold a
# few times; prints each node's "snapshot of N bytes taken in X ms, Y ms of CPU" lines.
# Usage: bench/raft_snapshot_cost.sh path/to/latchd [KEYS=100000] [THRESHOLD=2048]
set -u
LATCHD=$1
KEYS=${2:-100000}
TH=${3:-2048}
D=$(mktemp -d /tmp/latch-snapshot-cost.XXXXXX)
read -r R1 R2 R3 C1 C2 C3 < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(6)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
python3 - "$KEYS" > "$D/load.resp" <<'PY'
import sys
def enc(*a):
    return "*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(str(x)), x) for x in a)
for n in range(int(sys.argv[1])):
    ttl = ("PX", 3600000) if n % 2 else ()
    sys.stdout.write(enc("SET", "key:%d" % n, "value-%d-abcdefghij" % n, *ttl))
PY
PEERS="1=127.0.0.1:$R1:$C1 2=127.0.0.1:$R2:$C2 3=127.0.0.1:$R3:$C3"
PIDS=()
i=1
for C in $C1 $C2 $C3; do
  "$LATCHD" --port "$C" --bind 127.0.0.1 --raft-id $i --raft-peers "$PEERS" \
    --raft-dir "$D/n$i" --raft-snapshot-threshold "$TH" > "$D/log$i" 2>&1 &
  PIDS+=($!)
  i=$((i + 1))
done
trap 'kill "${PIDS[@]}" 2>/dev/null; wait; rm -rf "$D"' EXIT
LEADER=""
for _ in $(seq 1 150); do
  for C in $C1 $C2 $C3; do
    if redis-cli -p "$C" SET probe 1 2>/dev/null | grep -q OK; then LEADER=$C; break 2; fi
  done
  sleep 0.2
done
[ -n "$LEADER" ] || { echo "no leader"; exit 1; }
redis-cli -p "$LEADER" --pipe < "$D/load.resp" | tail -1
echo "keys: $(redis-cli -p "$LEADER" DBSIZE)"
timeout 120 redis-benchmark -p "$LEADER" -c 1 -n $((TH * 2)) -t set -q | tail -1
grep -h "snapshot of\|accepting writes" "$D"/log1 "$D"/log2 "$D"/log3 | sed 's/^.*Raft node/node/'
