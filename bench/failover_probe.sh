#!/bin/bash
# kill -9 of the leader -> first acknowledged SET NX through a survivor; default timeout 1000 ms.
B=${LATCHD:-$(dirname "$0")/../build/test/server/latchd}; D=${TMPDIR:-/tmp}/latch-failover-probe
for t in $(seq 1 ${TRIALS:-7}); do
  rm -rf $D; mkdir -p $D; base=$((22000 + t*10))
  P="1=127.0.0.1:$((base+1)):$((base+4)) 2=127.0.0.1:$((base+2)):$((base+5)) 3=127.0.0.1:$((base+3)):$((base+6))"
  for i in 1 2 3; do mkdir $D/n$i; $B --port $((base+3+i)) --bind 127.0.0.1 --raft-id $i --raft-peers "$P" --raft-dir $D/n$i $EXTRA > $D/log$i 2>&1 & echo $! > $D/pid$i; done
  leader=""; for k in $(seq 1 100); do for i in 1 2 3; do [ "$(redis-cli -p $((base+3+i)) ROLE 2>/dev/null | head -1)" = master ] && leader=$i; done; [ -n "$leader" ] && break; sleep 0.1; done
  sleep 1; via=$(( leader % 3 + 1 ))
  s=$(date +%s%N); kill -9 $(cat $D/pid$leader)
  for k in $(seq 1 2000); do [ "$(redis-cli -p $((base+3+via)) SET lk x NX PX 60000 2>/dev/null)" = OK ] && break; sleep 0.005; done
  e=$(date +%s%N); echo "trial $t: $(( (e-s)/1000000 )) ms"
  for i in 1 2 3; do kill -9 $(cat $D/pid$i) 2>/dev/null; done; sleep 0.3
done
