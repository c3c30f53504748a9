#!/usr/bin/env bash
# tests/cluster/run-first-contact.sh DIR: a host cut off before its rank's first exchange with
# some peers (tests/mp/first_contact_test.c). 8 ranks, two per host of the cluster that
# cluster-up.sh DIR started (at least 4 hosts), are started through the store, not Slurm, so
# that no job step is left waiting on the cut host. Once every rank is ready, h4's eth0 is set
# down and the ranks go: rank 7 (on h4) scatters to every rank in turn, rank 2 the first it has
# not met. It must say it cannot connect to rank 2 and get UCOLL_ERR_PEER_FAILED within 2 s (UCX
# refuses the endpoint at once), every other rank PEER_FAILED or TIMED_OUT within
# UCOLL_TIMEOUT + 5 s, no rank a wrong result, and every finalize must return. The link is set
# up again at the end, also when the script is stopped.
set -uo pipefail
if [ $# -ne 1 ]; then
    echo "usage: tests/cluster/run-first-contact.sh DIR" >&2
    exit 2
fi
DIR=$(cd "$1" && pwd -P) || exit 1
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd -P)
cd "$TOP" || exit 1
[ -x tests/mp/first_contact_test ] || {
    echo "run-first-contact: error: tests/mp/first_contact_test is not built" >&2
    exit 1
}
TIMEOUT_S=5
BOUND=$((TIMEOUT_S + 5))
export UCX_NET_DEVICES=eth0 UCOLL_TIMEOUT=$TIMEOUT_S UCOLL_SCATTER_ALG=linear
x() { "$HERE/cluster-exec.sh" "$DIR" "$@"; }
# shellcheck source=tests/cluster/records.sh
. "$HERE/records.sh"

run="$DIR/shared/first-contact"
rm -rf "$run"
mkdir -p "$run" || exit 1
port=$((20000 + RANDOM % 40000))
pids=()
for r in $(seq 0 7); do
    UCOLL_STORE=198.18.0.11:$port UCOLL_RANK=$r UCOLL_SIZE=8 \
        setsid timeout -k 5 90 "$HERE/cluster-exec.sh" "$DIR" "h$((1 + r / 2))" \
        tests/mp/first_contact_test --dir "$run" </dev/null >"$run/out-$r" 2>&1 &
    pids+=($!)
done
# up to 60 s for every rank to be ready; a rank that ended before it will never be
ready=0
for _ in $(seq 1 600); do
    ready=$(find "$run" -name 'ready-*' | wc -l)
    [ "$ready" -ge 8 ] && break
    ended=0
    for p in "${pids[@]}"; do
        kill -0 "$p" 2>/dev/null || ended=$((ended + 1))
    done
    [ "$ended" = 0 ] || break
    sleep 0.1
done
why=""
if [ "$ready" -lt 8 ]; then
    why="only $ready of 8 ranks became ready; "
else
    trap 'x h4 ip link set eth0 up' EXIT
    x h4 ip link set eth0 down || why="cannot set h4's eth0 down; "
fi
touch "$run/go"
for p in "${pids[@]}"; do
    wait "$p"
done
x h4 ip link set eth0 up
trap - EXIT
summary=""
if [ -z "$why" ]; then
    for r in $(seq 0 7); do
        rec="$run/rank-$r"
        [ -f "$rec" ] || {
            why="${why}rank $r has no record; "
            continue
        }
        status=$(rec_field "$rec" status)
        call_s=$(rec_field "$rec" call_s)
        wrong=$(rec_field "$rec" wrong)
        fin_s=$(rec_field "$rec" fin_s)
        summary="$summary rank $r: $status ${call_s} s;"
        if [ "$r" = 7 ]; then
            [ "$status" = UCOLL_ERR_PEER_FAILED ] && ! fgt "${call_s:-99}" 2 ||
                why="${why}rank 7 (cut off): $status after ${call_s} s, not PEER_FAILED in 2 s; "
            grep -q '^ucoll: rank 7 cannot connect to rank 2: ' "$run/out-7" ||
                why="${why}rank 7 did not say it cannot connect to rank 2; "
        else
            case $status in UCOLL_ERR_PEER_FAILED | UCOLL_ERR_TIMED_OUT) ;; *)
                why="${why}rank $r: $status; "
                ;;
            esac
            ! fgt "${call_s:-99}" "$BOUND" ||
                why="${why}rank $r: error after $call_s s (bound $BOUND s); "
        fi
        [ "${wrong:-1}" = 0 ] || why="${why}rank $r: wrong result; "
        [ -n "$fin_s" ] || why="${why}rank $r: ucoll_finalize did not return; "
    done
fi
echo "first contact after a cut link:$summary"
if [ -n "$why" ]; then
    echo "first contact after a cut link: FAIL: $why (records and output: $run)"
    exit 1
fi
echo "first contact after a cut link: verdict: PASS"
