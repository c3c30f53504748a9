#!/usr/bin/env bash
# tests/mp/run_shrink.sh: the shrink-after-failure test. Launches tests/mp/shrink_test REPS times
# on NP ranks under mpirun (--enable-recovery: the job goes on after a rank dies), launch i with
# seed SEED+i (its own victims, ways and points of dying, see shrink_test.c), and checks each
# launch's records:
#   - every planned victim wrote its record (it died where planned) and no other rank did;
#   - every one of the NP-K survivors wrote its record with status UCOLL_OK, final_size NP-K,
#     members_ok=1 (the final communicator is exactly the survivors, in order), ops equal to
#     --ops and wrong=0, and came back from ucoll_finalize;
#   - mpirun ended by itself within the launch limit;
#   - with --coordinator, every survivor shrank exactly twice if the dying coordinator sent its
#     decision to anyone, else once; with one victim, exactly once;
#   - ucoll_finalize returned within 7 s (it waits up to 2 s for the other survivors);
#   - the log holds no sanitizer report (for a --bin built with ASan/UBSan).
# --finalize-only: the victim dies once every rank's ucoll_init has returned (the ranks wait on
# each other's records, not on time), before anyone talked to it, and the survivors call
# ucoll_finalize once it is gone, without UCOLL_TIMEOUT: each must get PEER_FAILED from
# it within the same 7 s (some of them never talked to the victim: they learn of it only
# through the others).
# Prints one line per launch and a last line "shrink np=N victims=K: ... verdict: PASS|FAIL";
# exits 0 only on PASS. Records and logs stay in a directory under /tmp (printed).
#
# --coordinator: (K = 2) the second victim dies inside the survivors' first shrink, as its
# coordinator, after sending the decision to some of the others (shrink_test.c).
#
# Usage: run_shrink.sh [--np N] [--victims K] [--reps R] [--seed S] [--ops OPS] [--coordinator]
#                      [--finalize-only] [--bin PROGRAM]
#   defaults: N=6, K=1, R=20, S=1, OPS=1000, PROGRAM=tests/mp/shrink_test
set -uo pipefail

np=6 victims=1 reps=20 seed=1 ops=1000 bin="" coord=0 fin_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --np) np=$2; shift 2 ;;
    --victims) victims=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --coordinator) coord=1; shift ;;
    --finalize-only) fin_only=1; shift ;;
    *)
        sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
        exit 2
        ;;
    esac
done
case $np$victims$reps$seed$ops in
*[!0-9]*)
    echo "run_shrink.sh: --np, --victims, --reps, --seed and --ops take numbers" >&2
    exit 2
    ;;
esac
if [ -z "$bin" ]; then
    bin=tests/mp/shrink_test
    [ -x "$bin" ] || bin="$(dirname "$0")/shrink_test"
fi
if [ ! -x "$bin" ]; then
    echo "run_shrink.sh: no program $bin (build first, or pass --bin)" >&2
    exit 2
fi

# shellcheck source=tests/testlib.sh
. "$(dirname "$0")/../testlib.sh"
ucoll_local_env
# bounds every wait even if a failure went unnoticed (a survivor then reports TIMED_OUT: FAIL)
export UCOLL_TIMEOUT="${UCOLL_TIMEOUT:-20}"
export UCX_KEEPALIVE_INTERVAL="${UCX_KEEPALIVE_INTERVAL:-1s}"
limit=$((UCOLL_TIMEOUT * 3 + 60))
# finalize after a death waits up to 2 s for the other survivors; 5 s more of margin under load
fin_bound=7

work=$(mktemp -d /tmp/ucoll-shrink.XXXXXX)
fwd=()
for v in $(compgen -e | grep -E '^(UCX_|UCOLL_)'); do
    fwd+=(-x "$v")
done
pid=""
trap '[ -z "$pid" ] || kill -KILL -- "-$pid" 2>/dev/null; exit 143' TERM INT
fails=0 max_shrink=0 max_fin=0
for ((i = 0; i < reps; i++)); do
    s=$((seed + i))
    d="$work/np$np-k$victims-seed$s"
    mkdir -p "$d"
    t0=$SECONDS
    setsid timeout -k 5 "$limit" mpirun -np "$np" --enable-recovery "${fwd[@]}" \
        "$bin" --seed "$s" --dir "$d" --victims "$victims" --ops "$ops" --coordinator "$coord" --finalize-only "$fin_only" >"$d/log" 2>&1 </dev/null &
    pid=$!
    wait "$pid"
    rc=$?
    kill -KILL -- "-$pid" 2>/dev/null
    for f in "$d"/pid-*; do # a rank still alive outlived mpirun
        [ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null && echo "outlived" >>"$d/outlived"
    done
    err=""
    [ "$rc" = 124 ] || [ "$rc" = 137 ] && err="$err mpirun-timed-out(${limit}s)"
    [ -f "$d/outlived" ] && err="$err ranks-alive-after-mpirun"
    # a sanitized build (--bin): any report of ASan, LeakSanitizer or UBSan fails the launch
    grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$d/log" &&
        err="$err sanitizer-report"
    nv=$(find "$d" -maxdepth 1 -name "victim-*" | wc -l)
    [ "$nv" = "$victims" ] || err="$err $nv-victim-records(want-$victims)"
    dead=" "
    for f in "$d"/victim-*; do
        [ -f "$f" ] && dead="$dead${f##*/victim-} "
    done
    modes=$(cat "$d"/victim-* 2>/dev/null | sed -n 's/^mode=\([a-z]*\) .*sends=\(.*\)/\1(\2)/p; s/^mode=\([a-z]*\) iter.*/\1/p' | tr '\n' ',')
    # the coordinator's death: if it gave its decision (which counts it alive) to anyone, every
    # survivor adopts that decision and shrinks once more; if to no one, the next coordinator
    # decides anew without it
    sends=$(cat "$d"/victim-* 2>/dev/null | sed -n 's/.* sends=\(-\{0,1\}[0-9]*\)$/\1/p')
    nshr='[0-9]*'
    [ "$victims" = 1 ] && nshr=1
    if [ "$coord" = 1 ]; then
        case $sends in '') err="$err no-coordinator-record" ;; 0) nshr=1 ;; *) nshr=2 ;; esac
    fi
    want="status=UCOLL_OK shrinks=$nshr final_size=$((np - victims)) members_ok=1 ops=$ops wrong=0"
    want="$want shrink_s=[0-9.]*"
    shr=""
    for ((r = 0; r < np; r++)); do
        case "$dead" in *" $r "*) continue ;; esac
        f="$d/rank-$r"
        if [ ! -f "$f" ]; then
            err="$err rank$r:no-record"
            continue
        fi
        if [ "$fin_only" = 1 ]; then
            grep -q '^fin_status=UCOLL_ERR_PEER_FAILED ' "$f" ||
                err="$err rank$r:$(tail -1 "$f" | tr ' ' ',')"
        else
            grep -q "^rank=$r $want\$" "$f" || err="$err rank$r:$(head -1 "$f" | tr ' ' ',')"
        fi
        fin_s=$(sed -n 's/^fin_status=.* fin_s=\([0-9.]*\)$/\1/p' "$f")
        if [ -z "$fin_s" ]; then
            err="$err rank$r:no-finalize-record"
        elif ! awk -v s="$fin_s" -v b="$fin_bound" 'BEGIN { exit !(s <= b) }'; then
            err="$err rank$r:finalize-took-${fin_s}s"
        fi
        shr="$shr$(sed -n 's/.* shrinks=\([0-9]*\) .*/\1/p' "$f")"
        t=$(sed -n 's/.* shrink_s=\([0-9.]*\)$/\1/p' "$f")
        [ -n "$t" ] && max_shrink=$(awk -v a="$t" -v b="$max_shrink" 'BEGIN { print (a > b ? a : b) }')
        [ -n "$fin_s" ] && max_fin=$(awk -v a="$fin_s" -v b="$max_fin" 'BEGIN { print (a > b ? a : b) }')
    done
    line="seed $s: victims${dead}modes=${modes%,} shrinks=$shr launch=$((SECONDS - t0))s"
    if [ -n "$err" ]; then
        fails=$((fails + 1))
        line="$line FAIL$err"
    else
        line="$line ok"
    fi
    echo "$line" | tee -a "$work/summary"
done
verdict=PASS
[ "$fails" = 0 ] || verdict=FAIL
label=""
[ "$coord" = 0 ] || label=" coordinator"
[ "$fin_only" = 0 ] || label=" finalize-only"
echo "shrink np=$np victims=$victims$label: $((reps - fails)) of $reps launches ok; max time in" \
    "ucoll_comm_shrink ${max_shrink}s, max finalize ${max_fin}s (records in $work), verdict: $verdict"
[ "$verdict" = PASS ]
