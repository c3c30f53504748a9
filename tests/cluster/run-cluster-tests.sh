#!/usr/bin/env bash
# tests/cluster/run-cluster-tests.sh DIR [--quick]: the multi-process tests across the hosts of
# the namespace cluster that tests/cluster/cluster-up.sh DIR started (4 hosts), from the built
# tree this script belongs to. Every job is launched by srun on h1 (--mpi=pmix, ranks in
# blocks: ranks 2h and 2h+1 on host h+1 at -N 4 -n 8), UCX between hosts over TCP on the
# bridge (UCX_NET_DEVICES=eth0), the rings within a host:
#   - stats_test: endpoints and address lookups equal the peers of the schedules, and every
#     message to another host went through UCX, every small one within a host through the
#     rings (the layout in STATS_TEST_HOSTS, checked against SLURM_NODEID);
#   - mp_test (barrier ordering through DIR/shared, which every host sees), mp_api_test (500
#     split/free cycles) and tests/api_user/api_user.c; block_test's allgather, node-aware by
#     name and by auto;
#   - at 4 x 2 and 3 + 2 + 1 auto runs the node-aware forms (more than one host, a host of
#     more than one rank, consecutive ranks per host): mp_test and mp_api_test check their
#     results, stats_test their messages on each channel;
#   - at 4 x 2, ucoll_perf under UCOLL_PRINT_ALG: rank 0 says auto's node-aware plan;
#   - owed_test at 4 x 1 (with UCX's default protocols and with rendezvous for every message)
#     and 4 x 2: a rank whose collective returned owes its peers nothing.
# The layouts: 4 x 2, 4 x 1 and 3 hosts with 3 + 2 + 1 ranks.
# Prints one PASS or FAIL line per job (logs in DIR/logs) and exits 0 only if all passed.
set -uo pipefail
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
    echo "usage: tests/cluster/run-cluster-tests.sh DIR [--quick]" >&2
    exit 2
fi
DIR=$(cd "$1" && pwd -P) || exit 2
quick=0
[ "${2:-}" = --quick ] && quick=1
HERE=$(cd -P "$(dirname "$0")" && pwd -P)
TOP=$(cd -P "$HERE/../.." && pwd -P)
cd "$TOP" || exit 2
LOGS="$DIR/logs"
mkdir -p "$LOGS" "$DIR/shared" || exit 1
passed=0 failed=0

pass() {
    passed=$((passed + 1))
    echo "PASS  $*"
}
fail() {
    failed=$((failed + 1))
    echo "FAIL  $1 (log: $2)"
    tail -n 15 "$2" | sed 's/^/      /'
}

for p in tests/mp/mp_test tests/mp/mp_api_test tests/mp/stats_test tests/mp/owed_test \
    tests/mp/block_test ./ucoll_perf; do
    [ -x "$p" ] || {
        echo "run-cluster-tests: error: $p is not built (make, then make $p)" >&2
        exit 1
    }
done
API_BIN="$DIR/api_user"
if ! gcc -std=c11 -Wall -Wextra -Werror -o "$API_BIN" tests/api_user/api_user.c -Iinclude \
    -L.libs -lucoll -Wl,-rpath,"$TOP/.libs" >"$LOGS/api_user-build.log" 2>&1; then
    fail "build of tests/api_user/api_user.c" "$LOGS/api_user-build.log"
    API_BIN=""
fi

export UCX_NET_DEVICES=eth0 UCOLL_TIMEOUT=${UCOLL_TIMEOUT:-60}
# job_log NAME: the log file of job NAME
job_log() {
    echo "$LOGS/$(echo "$1" | tr -c 'A-Za-z0-9=.,_-' '_').log"
}
# job NAME SECONDS SRUN_OPTIONS... -- CMD...: one srun on h1; passes if srun exits 0 and, where
# the program prints one, its verdict line says PASS
job() {
    local name=$1 secs=$2 log
    shift 2
    local -a opts=()
    while [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    shift
    log=$(job_log "$name")
    local t0=$SECONDS
    echo "+ srun ${opts[*]} $*" >"$log"
    timeout -k 10 "$secs" "$HERE/cluster-exec.sh" "$DIR" h1 srun --mpi=pmix --overcommit \
        --kill-on-bad-exit=1 --immediate=60 --distribution=block "${opts[@]}" "$@" \
        </dev/null >>"$log" 2>&1
    local rc=$? verdict
    verdict=$(grep -E 'verdict:|^mp_test np=|^api_user np=' "$log" | tail -n 1)
    if [ "$rc" = 0 ] && ! grep -qE 'verdict: FAIL|FAIL' <<<"$verdict"; then
        pass "$name ($((SECONDS - t0)) s)${verdict:+: $verdict}"
    else
        fail "$name: rc $rc after $((SECONDS - t0)) s" "$log"
    fi
}

counts=0,1,7,1000,20000
[ "$quick" = 1 ] && counts=0,1,1000
# layout: name, each rank's host (SLURM_NODEID), srun options
for layout in "4x2;0,0,1,1,2,2,3,3;-N 4 -n 8" "4x1;0,1,2,3;-N 4 -n 4" \
    "3+2+1;0,0,0,1,1,2;-N 3 -n 6 --distribution=arbitrary"; do
    IFS=';' read -r tag hosts srun_opts <<<"$layout"
    read -ra opts <<<"$srun_opts"
    np=$(echo "$hosts" | tr ',' '\n' | wc -l)
    if [ "$tag" = 3+2+1 ]; then
        # 3 ranks on h1, 2 on h2, 1 on h3, in rank order
        export SLURM_HOSTFILE="$DIR/hostfile-3-2-1"
        printf 'h1\nh1\nh1\nh2\nh2\nh3\n' >"$SLURM_HOSTFILE"
    else
        unset SLURM_HOSTFILE
    fi
    job "stats_test $tag" 300 "${opts[@]}" -- env STATS_TEST_HOSTS="$hosts" tests/mp/stats_test
    job "mp_test $tag" 900 "${opts[@]}" -- env MP_TEST_SHARED_DIR="$DIR/shared" \
        tests/mp/mp_test --expect-size "$np" --counts "$counts"
    # 500 split/free cycles, not 5000: what the 5000 prove (ids neither run out nor collide,
    # the heap stays bounded) does not depend on the hosts, and the on-host launches of
    # tests/run-tests.sh run them; here they were 92 of the 4 x 2 job's 111 s
    job "mp_api_test $tag" 600 "${opts[@]}" -- tests/mp/mp_api_test --expect-size "$np" \
        --split-cycles 500
    [ -z "$API_BIN" ] || job "api_user $tag" 300 "${opts[@]}" -- "$API_BIN" --expect-size "$np"
    # allgather, the node-aware form named and auto's, against its flat forms
    job "block_test allgather $tag" 300 "${opts[@]}" -- tests/mp/block_test --expect-size "$np" \
        --colls allgather --alg-list allgather=node-aware,bruck,ring,auto
    # UCOLL_PRINT_ALG on 4 hosts x 2: auto's node-aware allreduce of 1 KiB, said by rank 0 with
    # what its phases run; the stated model is ucoll_sched's default (1 us, 0.1, 0.1), under
    # which `ucoll_sched -c allreduce -a all --hosts 4 --per-host 2 -m 1024` prints the same
    # plan. ucoll_perf chooses twice (its int32 check allreduce after the first iteration
    # makes auto choose again), so the line comes exactly twice
    if [ "$tag" = 4x2 ]; then
        name="ucoll_perf UCOLL_PRINT_ALG $tag"
        job "$name" 300 "${opts[@]}" -- env UCOLL_PRINT_ALG=1 \
            UCOLL_ALPHA_US=1 UCOLL_BETA_NS_PER_BYTE=0.1 UCOLL_GAMMA_NS_PER_BYTE=0.1 \
            ./ucoll_perf -c allreduce -d float32 -b 1K -e 1K -n 2 -w 1
        log=$(job_log "$name")
        said=$(grep -cxF "ucoll: auto on comm 0 (8 ranks): allreduce of 256 float32 (1024 B): \
node-aware (leaders: recursive-doubling, local reduce: binomial, local bcast: binomial)" "$log")
        if [ "$said" = 2 ]; then
            pass "$name: the node-aware plan said twice"
        else
            fail "$name: the node-aware plan said $said times (want 2)" \
                "$log"
        fi
    fi
    # every peer on another host, so every message over TCP: with UCX's protocols, and with
    # rendezvous for every message; with 2 ranks per host, the default protocols
    case $tag in
    4x1)
        job "owed_test $tag" 300 "${opts[@]}" -- tests/mp/owed_test --expect-size "$np" --sleep 2
        job "owed_test $tag UCX_RNDV_THRESH=0" 300 "${opts[@]}" -- env UCX_RNDV_THRESH=0 \
            tests/mp/owed_test --expect-size "$np" --sleep 2
        ;;
    4x2) job "owed_test $tag" 300 "${opts[@]}" -- tests/mp/owed_test --expect-size "$np" --sleep 2 ;;
    esac
done
unset SLURM_HOSTFILE
echo "run-cluster-tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
