#!/usr/bin/env bash
# tests/mp/run_fault.sh: the dead-peer test. Launches tests/mp/fault_test REPS times on NP ranks
# under mpirun, each launch with its own seed (so its own victim, kill mode and kill point, see
# fault_test.c), and checks each launch's records:
#   - the victim wrote its record (it really died at the planned point) and mpirun ended by
#     itself, within TIMEOUT + 15 s of the kill;
#   - every one of the NP-1 survivors wrote its record, got UCOLL_ERR_PEER_FAILED or
#     UCOLL_ERR_TIMED_OUT, got it within TIMEOUT + 5 s of the kill (t_err - t_kill) and from a
#     call that took at most TIMEOUT + 5 s, had no wrong result before, and came back from
#     ucoll_finalize within TIMEOUT + 5 s.
# --stop S more launches (default 1) stop the victim (SIGSTOP) instead of killing it: a rank that
# hangs, with its connections open, so the survivors can only time out (UCOLL_ERR_TIMED_OUT),
# in their collective and again in ucoll_finalize; once they have all finished (or TIMEOUT + 10
# s after the stop) the script kills the victim, so that mpirun can end.
# --gone G more launches (default 2) kill the victim right after the first barrier and let the
# survivors start only once its process is gone: their first sends to it are posted before
# anything noticed the death, so UCX fails them itself (PEER_FAILED all the same).
# Prints one line per launch and a last line "fault np=N: ... verdict: PASS|FAIL"; exits 0 only
# on PASS. Records and logs stay in a directory under /tmp (printed).
#
# Launch settings (kept here, as this is what makes a dead rank detectable and the run end):
#   mpirun --enable-recovery   Open MPI 4.1 otherwise kills the whole job as soon as a rank dies
#                              by a signal; with it the survivors run on and mpirun exits when
#                              they have (orte_abort_on_non_zero_status=0 instead leaves mpirun
#                              hanging after the last rank exits).
#   UCOLL_TIMEOUT=5            bounds every call even if a failure went unnoticed.
#   UCX_KEEPALIVE_INTERVAL=1s  UCX's endpoint keepalive period (default 20 s): how UCX notices
#                              a peer whose connections are not reset (a lost host or network;
#                              not testable on one host). It matters only for endpoints with UCX
#                              peer error handling: other hosts, or all with
#                              UCOLL_FAILURE_DETECTION=ucx (set it in the environment to test
#                              that mode). How a SIGKILLed rank on this host is noticed:
#                              auto (default): its process id is probed every 20 ms while a call
#                              waits; ucx: UCX over TCP sees its connections reset. Both take
#                              10-200 ms here, with the default keepalive interval as with 1 s.
#                              A stopped process (--stop) is noticed by neither: only
#                              UCOLL_TIMEOUT ends the wait.
#
# --big B: every collective of the loop moves B bytes (fault_test --big, 4 iterations, kills
# within 1.5 s): the victim dies or stops during large transfers. (At 64 MiB on 4 ranks of
# a 2-CPU host an iteration takes about 3 s; 8 iterations made each launch twice as long.)
# With UCOLL_SINGLE_COPY_MIN set those are single-copy reads on this host; the script then
# also requires that the survivors of the launches read some message by single copy
# (UCOLL_TEST_SHM_COUNTS' lines).
# --mem: fault_test --mem (buffers from ucoll_mem_alloc); with --big and single copy, some of
# the survivors' reads must then have gone through a mapping of the sender's region (copied
# from it, or reduced straight out of it).
#
# Usage: run_fault.sh [--np N] [--reps R] [--stop S] [--gone G] [--seed S] [--timeout T]
#                     [--big B] [--mem] [--bin PROGRAM]
#   defaults: N=4, R=20, S=1, G=2, seed 1 (launch i uses seed+i), T=5,
#   PROGRAM=tests/mp/fault_test (relative to the current directory, else next to this script)
set -uo pipefail

np=4 reps=20 stops=1 gones=2 seed=1 timeout=5 bin="" big="" mem=0
while [ $# -gt 0 ]; do
    case $1 in
    --np) np=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --stop) stops=$2; shift 2 ;;
    --gone) gones=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --big) big=$2; shift 2 ;;
    --mem) mem=1; shift ;;
    *)
        sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
        exit 2
        ;;
    esac
done
case $np$reps$stops$gones$big in
*[!0-9]*)
    echo "run_fault.sh: --np, --reps, --stop and --gone take numbers" >&2
    exit 2
    ;;
esac
launches=$((reps + stops + gones))
if [ "$np" -lt 2 ] || [ "$launches" -lt 1 ]; then
    echo "run_fault.sh: needs --np >= 2 and at least one launch" >&2
    exit 2
fi
if [ -z "$bin" ]; then
    bin=tests/mp/fault_test
    [ -x "$bin" ] || bin="$(dirname "$0")/fault_test"
fi
if [ ! -x "$bin" ]; then
    echo "run_fault.sh: no program $bin (build first, or pass --bin)" >&2
    exit 2
fi

# shellcheck source=tests/testlib.sh
. "$(dirname "$0")/../testlib.sh"
ucoll_local_env
export UCOLL_TIMEOUT=$timeout
export UCX_KEEPALIVE_INTERVAL="${UCX_KEEPALIVE_INTERVAL:-1s}"
# startup (1-3 s per launch on 2 cores) + the loop until the kill (< 1 s) + detection + exit
limit=$((timeout + 5 + 30))
bound=$((timeout + 5))

big_args=()
if [ -n "$big" ]; then
    big_args=(--big "$big" --iters 4 --max-delay-ms 1500)
    export UCOLL_TEST_SHM_COUNTS=1
fi
[ "$mem" = 0 ] || big_args+=(--mem)

work=$(mktemp -d /tmp/ucoll-fault.XXXXXX)
fwd=()
for v in $(compgen -e | grep -E '^(UCX_|UCOLL_)'); do
    fwd+=(-x "$v")
done

# the launches run in sessions of their own: if this script is stopped, stop the current one
pid=""
trap '[ -z "$pid" ] || kill -KILL -- "-$pid" 2>/dev/null; exit 143' TERM INT
for ((i = 0; i < launches; i++)); do
    s=$((seed + i))
    mode=()
    [ "$i" -lt "$reps" ] || mode=(--mode stop)
    [ "$i" -lt $((reps + stops)) ] || mode=(--mode gone)
    d="$work/np$np-seed$s${mode[1]:+-${mode[1]}}"
    mkdir -p "$d"
    t0=$(date +%s.%N)
    setsid timeout -k 5 "$limit" mpirun -np "$np" --enable-recovery "${fwd[@]}" \
        "$bin" --seed "$s" --dir "$d" "${mode[@]}" "${big_args[@]}" >"$d/log" 2>&1 </dev/null &
    pid=$!
    if [ "${mode[1]:-}" = stop ]; then
        # the stopped victim is killed once every survivor is through ucoll_finalize
        stopped_at=""
        while kill -0 "$pid" 2>/dev/null; do
            if [ -z "$stopped_at" ] && [ -f "$d/victim" ]; then
                stopped_at=$SECONDS
            fi
            if [ -n "$stopped_at" ]; then
                done_ranks=$(cat "$d"/rank-* 2>/dev/null | grep -c '^fin_status=')
                if [ "$done_ranks" -ge $((np - 1)) ] ||
                    [ $((SECONDS - stopped_at)) -gt $((bound + 10)) ]; then
                    kill -KILL "$(sed -n 's/.* pid=\([0-9]*\) .*/\1/p' "$d/victim")"
                    break
                fi
            fi
            sleep 0.2
        done
    fi
    wait "$pid"
    rc=$?
    t1=$(date +%s.%N)
    kill -KILL -- "-$pid" 2>/dev/null
    # ranks run in process groups of their own: any still alive outlived mpirun
    outlived=""
    for f in "$d"/pid-*; do
        [ -f "$f" ] || continue
        if kill -KILL "$(cat "$f")" 2>/dev/null; then
            outlived="$outlived ${f##*/pid-}"
        fi
    done
    # one awk program judges the launch and prints its line; its last field is the verdict
    line=$(awk -v np="$np" -v bound="$bound" -v rc="$rc" -v limit="$limit" -v left="$outlived" \
        -v t0="$t0" -v t1="$t1" -v dir="$d" '
        function kv(line, arr,    n, i, f, p) {
            n = split(line, f, " ")
            for (i = 1; i <= n; i++) {
                p = index(f[i], "=")
                if (p > 0) arr[substr(f[i], 1, p - 1)] = substr(f[i], p + 1)
            }
        }
        BEGIN {
            err = ""
            launch = t1 - t0
            if (rc == 124 || rc == 137) err = err " mpirun-timed-out(" limit "s)"
            if (left != "") err = err " ranks-alive-after-mpirun:" left
            if ((getline vl < (dir "/victim")) <= 0) {
                print "FAIL no victim record (the planned kill did not happen)"; exit
            }
            kv(vl, v)
            tk = v["t_kill"] + 0
            end = t1 - tk
            if (end > bound + 10) err = err sprintf(" mpirun-ended-%.1fs-after-the-kill", end)
            summary = sprintf("victim=%s mode=%s iter=%s", v["victim"], v["mode"], v["iter"])
            maxd = 0; maxc = 0; maxf = 0; np_ = 0; nt = 0
            for (r = 0; r < np; r++) {
                if (r == v["victim"]) continue
                f = dir "/rank-" r
                delete a; delete b
                if ((getline l1 < f) <= 0) { err = err " rank" r ":no-record"; continue }
                kv(l1, a)
                if ((getline l2 < f) <= 0) l2 = ""
                kv(l2, b)
                det = a["t_err"] - tk
                if (det > maxd) maxd = det
                if (a["call_s"] + 0 > maxc) maxc = a["call_s"] + 0
                if (a["status"] == "UCOLL_ERR_PEER_FAILED") np_++
                else if (a["status"] == "UCOLL_ERR_TIMED_OUT") nt++
                else err = err " rank" r ":" a["status"]
                if (det > bound) err = err sprintf(" rank%d:detected-after-%.1fs", r, det)
                if (a["call_s"] + 0 > bound) err = err " rank" r ":call-took-" a["call_s"] "s"
                if (a["wrong"] != "0") err = err " rank" r ":" a["wrong"] "-wrong-results"
                if (l2 == "") err = err " rank" r ":no-finalize-record"
                else {
                    if (b["fin_s"] + 0 > maxf) maxf = b["fin_s"] + 0
                    if (b["fin_s"] + 0 > bound) err = err " rank" r ":finalize-took-" b["fin_s"] "s"
                }
            }
            printf "%s peer_failed=%d timed_out=%d max_detect=%.3f max_call=%.3f " \
                "max_finalize=%.3f launch=%.1f end_after_kill=%.1f %s\n", summary, np_, nt,
                maxd, maxc, maxf, launch, end, (err == "" ? "ok" : "FAIL" err)
        }')
    echo "seed $s: $line" | tee -a "$work/summary"
done

# totals over the launches' lines
totals=$(awk '
    {
        for (i = 1; i <= NF; i++)
            if ((p = index($i, "=")) > 0) v[substr($i, 1, p - 1)] = substr($i, p + 1)
    }
    $NF != "ok" { bad++ }
    /peer_failed=/ {
        pf += v["peer_failed"]; to += v["timed_out"]; modes[v["mode"]]++
        if (v["max_detect"] + 0 > md) md = v["max_detect"] + 0
        if (v["max_call"] + 0 > mc) mc = v["max_call"] + 0
        if (v["max_finalize"] + 0 > mf) mf = v["max_finalize"] + 0
        if (v["launch"] + 0 > la) la = v["launch"] + 0
    }
    END {
        for (m in modes) ml = ml " " m ":" modes[m]
        printf "%d|%s|%d UCOLL_ERR_PEER_FAILED, %d UCOLL_ERR_TIMED_OUT|%.3f|%.3f|%.3f|%.1f\n",
            bad, ml, pf, to, md, mc, mf, la
    }' "$work/summary")
IFS='|' read -r bad mode_list survivors max_detect max_call max_fin max_launch <<<"$totals"
verdict=PASS
[ "$bad" = 0 ] || verdict=FAIL
copies=""
if [ -n "$big" ] && [ "${UCOLL_SINGLE_COPY_MIN:-0}" != 0 ]; then
    # the survivors' finalize lines: messages they read by single copy, over all launches
    read_total=$(cat "$work"/*/log | sed -n 's/.* copies_read \([0-9]*\).*/\1/p' |
        awk '{ n += $1 } END { print n + 0 }')
    copies=" single-copy reads by survivors: $read_total;"
    [ "$read_total" -gt 0 ] || verdict=FAIL
    if [ "$mem" = 1 ]; then
        mapped_total=$(cat "$work"/*/log |
            sed -n 's/.* copies_mapped \([0-9]*\) copies_lent \([0-9]*\).*/\1 \2/p' |
            awk '{ n += $1 + $2 } END { print n + 0 }')
        copies="$copies of them through mappings of the sender's region: $mapped_total;"
        [ "$mapped_total" -gt 0 ] || verdict=FAIL
    fi
fi
echo "records and logs: $work"
echo "fault np=$np: $launches launches (victim modes$mode_list), $bad failed;" \
    "survivors: $survivors" \
    "(UCOLL_TIMEOUT=$timeout, bound ${bound} s); max detection ${max_detect} s after the kill," \
    "max failing call ${max_call} s, max finalize ${max_fin} s, max launch ${max_launch} s;$copies" \
    "verdict: $verdict"
[ "$verdict" = PASS ]
