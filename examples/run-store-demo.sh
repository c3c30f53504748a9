#!/usr/bin/env bash
# examples/run-store-demo.sh [N] [KEYS_PER_RANK]: the second demo, with no launcher at all. A
# plain shell loop starts N (default 4) copies of examples/sort_keys_store on this machine;
# rank 0 serves the store on 127.0.0.1:PORT (a free port picked at random), the others connect
# to it, and together they sort N * KEYS_PER_RANK keys with ucoll_alltoall(v) and check the
# result. Build first (examples/run-demo.sh, or ./autogen.sh && ./configure && make).
# Exit status 0 when every rank found the keys sorted and complete.
set -u
cd "$(dirname "$0")/.."
np=${1:-4} keys=${2:-100000}
prog=examples/sort_keys_store
[ -x "$prog" ] || { echo "run-store-demo: build first: $prog is missing" >&2; exit 2; }
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
for try in 1 2; do
    port=$((20000 + RANDOM % 40000))
    pids=()
    for ((r = 0; r < np; r++)); do
        "$prog" "127.0.0.1:$port" "$r" "$np" "$keys" &
        pids+=($!)
    done
    bad=0
    for pid in "${pids[@]}"; do
        wait "$pid" || bad=$((bad + 1))
    done
    [ "$bad" = 0 ] && { echo "run-store-demo: $np ranks, every one exited with 0"; exit 0; }
    # another process may have held the port: one more try on another one
    echo "run-store-demo: $bad of $np ranks failed (try $try)" >&2
done
exit 1
