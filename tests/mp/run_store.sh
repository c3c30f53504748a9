#!/usr/bin/env bash
# tests/mp/run_store.sh --np N [--seconds S] [--port P] PROGRAM [ARGS...]: a job of N ranks with no
# launcher at all: a plain shell loop starts N copies of PROGRAM, rank r with
# UCOLL_STORE=127.0.0.1:PORT UCOLL_RANK=r UCOLL_SIZE=N (PORT at random in 20000..59999), so
# that ucoll_init takes the store's path. Each rank writes to a file of its own, printed once
# all have exited (rank 0 first, the others' last lines). If rank 0 says its address is in use
# (another process took the port), the ranks are stopped and the job runs once more on another
# port. A rank still running after S seconds (default 900) is killed. Exit status 0 only if
# every rank exited with 0. --port P: the first try's port (to test the retry).
set -u
np="" secs=900 port=$((20000 + RANDOM % 40000))
while [ $# -gt 0 ]; do
    case $1 in
    --np) np=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    *) break ;;
    esac
done
if ! [[ $np =~ ^[1-9][0-9]*$ ]] || ! [[ $secs =~ ^[1-9][0-9]*$ ]] || ! [[ $port =~ ^[1-9][0-9]*$ ]] ||
    [ $# -eq 0 ]; then
    echo "usage: run_store.sh --np N [--seconds S] [--port P] PROGRAM [ARGS...]" >&2
    exit 2
fi
dir=$(mktemp -d /tmp/ucoll-store.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# launch PORT: starts the ranks, waits for all of them; sets STATUSES; returns 3 if rank 0 found
# the port in use
launch() {
    local port=$1 r
    shift
    local -a pids=()
    for ((r = 0; r < np; r++)); do
        UCOLL_STORE=127.0.0.1:$port UCOLL_RANK=$r UCOLL_SIZE=$np \
            timeout -k 5 "$secs" "$@" >"$dir/rank-$r.log" 2>&1 </dev/null &
        pids+=($!)
    done
    local busy=0
    # rank 0 first: if it cannot serve, the others would wait for their timeout in vain
    wait "${pids[0]}"
    STATUSES=("$?")
    if grep -q 'Address already in use' "$dir/rank-0.log"; then
        busy=1
        for ((r = 1; r < np; r++)); do kill -TERM "${pids[$r]}" 2>/dev/null; done
    fi
    for ((r = 1; r < np; r++)); do
        wait "${pids[$r]}"
        STATUSES+=("$?")
    done
    [ "$busy" = 0 ] || return 3
}

echo "run_store: np=$np port=$port: $*"
launch "$port" "$@"
if [ $? = 3 ]; then
    port=$((20000 + (port - 20000 + 1 + RANDOM % 39999) % 40000))
    echo "run_store: rank 0 found the port in use; once more on port $port"
    launch "$port" "$@"
fi
bad=""
for ((r = 0; r < np; r++)); do
    if [ "$r" = 0 ]; then
        echo "---- rank 0:"
        cat "$dir/rank-0.log"
    elif [ "${STATUSES[$r]}" != 0 ] || [ -s "$dir/rank-$r.log" ]; then
        echo "---- rank $r (last lines):"
        tail -n 20 "$dir/rank-$r.log"
    fi
    [ "${STATUSES[$r]}" = 0 ] || bad="$bad rank$r=${STATUSES[$r]}"
done
# no "verdict:" here: run-tests.sh's summary of the launch is then the program's own last line
if [ -n "$bad" ]; then
    echo "run_store: np=$np: FAIL: ranks exited with errors:$bad"
    exit 1
fi
echo "run_store: np=$np: every rank exited with 0"
