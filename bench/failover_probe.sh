#!/bin/bash
# A quick failover figure without bench/cluster.py's Release build and etcd: three latchd on
# loopback (free ports picked per trial), kill -9 of the leader, then SET NX through a survivor
# every 5 ms until OK; prints the ms from the kill to that OK. Default election timeout
# (1000 ms). TRIALS=n (7), LATCHD=path (the Debug build), EXTRA="--raft-leader-probe no".
B=${LATCHD:-$(dirname "$0")/../build/test/server/latchd}; D=${TMPDIR:-/tmp}/latch-failover-probe
free_ports() {  # six distinct free loopback ports
  python3 -c 'import socket
ss=[socket.socket() for _ in range(6)]
[s.bind(("127.0.0.1", 0)) for s in ss]
print(" ".join(str(s.getsockname()[1]) for s in ss))'
}
for t in $(seq 1 "${TRIALS:-7}"); do
  rm -rf "$D"; mkdir -p "$D"
  read -r r1 r2 r3 c1 c2 c3 <<<"$(free_ports)"; raft=(0 "$r1" "$r2" "$r3"); client=(0 "$c1" "$c2" "$c3")
  P="1=127.0.0.1:$r1:$c1 2=127.0.0.1:$r2:$c2 3=127.0.0.1:$r3:$c3"
  for i in 1 2 3; do
    mkdir "$D/n$i"
    # shellcheck disable=SC2086
    "$B" --port "${client[$i]}" --bind 127.0.0.1 --raft-id "$i" --raft-peers "$P" \
      --raft-dir "$D/n$i" $EXTRA >"$D/log$i" 2>&1 &
    echo $! >"$D/pid$i"
  done
  leader=""
  for _ in $(seq 1 100); do
    for i in 1 2 3; do
      [ "$(redis-cli -p "${client[$i]}" ROLE 2>/dev/null | head -1)" = master ] && leader=$i
    done
    [ -n "$leader" ] && break; sleep 0.1
  done
  [ -z "$leader" ] && { echo "trial $t: no leader in 10 s"; continue; }
  sleep 1; via=$((leader % 3 + 1))
  s=$(date +%s%N); kill -9 "$(cat "$D/pid$leader")"
  for _ in $(seq 1 2000); do
    [ "$(redis-cli -p "${client[$via]}" SET lk x NX PX 60000 2>/dev/null)" = OK ] && break
    sleep 0.005
  done
  e=$(date +%s%N); echo "trial $t: $(((e - s) / 1000000)) ms"
  for i in 1 2 3; do kill -9 "$(cat "$D/pid$i")" 2>/dev/null; done; sleep 0.3
done
rm -rf "$D"
