#!/usr/bin/env bash
# tests/cluster/run-host-faults.sh DIR KIND LAUNCHES [SEED]: host failures on the namespace
# cluster of tests/cluster/cluster-up.sh DIR (4 hosts). Each launch runs fault_test --mode
# external at -N 4 -n 8 (2 ranks per host, a loop of mixed collectives, UCOLL_TIMEOUT=5),
# waits until every rank is in the loop, waits a random 0-1.5 s more, and then fails one host
# (h2..h4; h1 runs srun):
#   kill  every process of the job on that host (its ranks and slurmstepd) SIGKILLed at once;
#   link  the host's eth0 set down, and left down until the launch is over.
# A launch passes when every rank that was not killed recorded UCOLL_ERR_PEER_FAILED or
# UCOLL_ERR_TIMED_OUT within UCOLL_TIMEOUT + 5 s of the failure (no TRANSPORT, no wrong result,
# no rank without a record, no error before the failure, ucoll_finalize returned) and srun
# ended. srun --no-kill keeps Slurm from killing the survivors (in their finalize) when it finds
# the host down. Once every rank that must write a record has written its finalize's line, the
# job is cancelled (scancel; srun, if it still waits 2 s later for the failed host's step, is
# killed): a job whose tasks vanished with their host would otherwise end only by --wait, 5 s
# (after a cut link 20 s) after its first task exits. After a cut link the link is set up again and
# the script waits until the host is idle in Slurm, and before the next launch until every
# host is; a host that Slurm marked drained or down (its slurmstepd could not report the
# step's end while cut off, and a minute after the kill request was "not ending with signals":
# reason "Kill task failed") is resumed with scontrol update state=resume, and the summary
# counts those resumes; a launch whose allocation Slurm refused (a host drained while srun
# waited, so no task started) is made again, at most twice, and counted too.
# Each rank's stderr goes to a file of its own beside its record (srun --error, written on its
# host): a cut-off host's ranks could not send theirs to srun.
# Prints one line per launch and a summary with the largest detection time (failure to a
# survivor's error) and finalize time; exits 0 only if every launch passed.
set -uo pipefail
if [ $# -lt 3 ] || [ ! -d "$1" ] || ! [[ $3 =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: tests/cluster/run-host-faults.sh DIR kill|link LAUNCHES [SEED]" >&2
    exit 2
fi
DIR=$(cd "$1" && pwd -P) || exit 2
KIND=$2 LAUNCHES=$3 SEED=${4:-$RANDOM}
case $KIND in kill | link) ;; *)
    echo "run-host-faults: KIND is kill or link, not '$KIND'" >&2
    exit 2
    ;;
esac
HERE=$(cd -P "$(dirname "$0")" && pwd -P)
cd -P "$HERE/../.." || exit 2
[ -x tests/mp/fault_test ] || {
    echo "run-host-faults: error: tests/mp/fault_test is not built" >&2
    exit 1
}
TIMEOUT_S=5
# srun ends the step this long after its first task exits: after a cut link the survivors'
# errors come 5-8 s after the cut and their finalize takes up to UCOLL_TIMEOUT more (the cut
# host's tasks never report their end); after a kill, a moment
WAIT_S=5
[ "$KIND" = link ] && WAIT_S=20
BOUND=$((TIMEOUT_S + 5))
export UCX_NET_DEVICES=eth0 UCOLL_TIMEOUT=$TIMEOUT_S
RANDOM=$SEED
x() { "$HERE/cluster-exec.sh" "$DIR" "$@"; }
# shellcheck source=tests/cluster/records.sh
. "$HERE/records.sh"

# waits (up to 60 s) until host H is idle in Slurm again; resumes it if Slurm drained it or set
# it down (a cut link leaves the host's slurmstepd unable to report, see above)
resumed=0
wait_idle() {
    local st="" n=0 reason
    for _ in $(seq 1 300); do
        st=$(x h1 sinfo -h -n "$1" -o %T 2>/dev/null)
        [ "$st" = idle ] && return 0
        case $st in drain* | down*)
            # once a second at most, until it takes (a stepd still finishing may drain it anew)
            if [ $((n % 5)) = 0 ]; then
                reason=$(x h1 sinfo -h -n "$1" -o %E 2>/dev/null)
                echo "run-host-faults: $1 is '$st' ($reason): resuming it"
                # (refused if the host came back meanwhile: the next look sees it idle)
                x h1 scontrol update nodename="$1" state=resume 2>/dev/null &&
                    resumed=$((resumed + 1))
            fi
            n=$((n + 1))
            ;;
        esac
        sleep 0.2
    done
    echo "run-host-faults: $1 is '$st', not idle, 60 s after the launch" >&2
    return 1
}

# owes_record R: whether rank R must leave a record (all but the killed host's, ranks 2h and
# 2h + 1 on host h + 1)
owes_record() {
    [ "$KIND" != kill ] || [ $((1 + $1 / 2)) != "${victim#h}" ]
}

failed=0 max_detect=0 max_fin=0 retried=0
for i in $(seq 1 "$LAUNCHES"); do
    # a cut-off host's slurmstepd may drain it a minute after an earlier launch, when the
    # wait below is over: every host is idle (or resumed) before the next launch starts
    if [ "$KIND" = link ] && [ "$i" -gt 1 ]; then
        for h in h1 h2 h3 h4; do
            wait_idle "$h" || failed=$((failed + 1))
        done
    fi
    victim=h$((2 + RANDOM % 3))
    delay_ms=$((RANDOM % 1500))
    seed=$((SEED * 1000 + i))
    run="$DIR/shared/faults/$KIND-$seed"
    rm -rf "$run"
    mkdir -p "$run" || exit 1
    log="$run/srun.log"
    # Slurm may still drain a host that an earlier cut left behind while this srun waits for
    # its nodes: it then refuses the allocation and no task starts. Such a launch is made
    # again (at most twice) once every host is idle; the summary counts these retries.
    for attempt in 1 2 3; do
        t_start=$(date +%s.%N)
        setsid timeout -k 10 180 "$HERE/cluster-exec.sh" "$DIR" h1 srun --mpi=pmix --overcommit \
            --immediate=60 --no-kill --wait="$WAIT_S" -N 4 -n 8 --distribution=block \
            --error="$run/stderr-%t" tests/mp/fault_test --seed "$seed" --dir "$run" \
            --mode external </dev/null >"$log" 2>&1 &
        srun_pid=$!
        ready=0
        for _ in $(seq 1 600); do
            ready=$(find "$run" -name 'ready-*' | wc -l)
            [ "$ready" -ge 8 ] && break
            kill -0 "$srun_pid" 2>/dev/null || break
            sleep 0.1
        done
        if [ "$ready" = 0 ] && [ "$attempt" -lt 3 ] && ! kill -0 "$srun_pid" 2>/dev/null &&
            grep -qE 'Unable to allocate resources|Required node not available' "$log"; then
            wait "$srun_pid"
            echo "run-host-faults: launch $i: Slurm refused the allocation ($(tail -n 1 "$log")): again"
            retried=$((retried + 1))
            for h in h1 h2 h3 h4; do
                wait_idle "$h" || failed=$((failed + 1))
            done
            continue
        fi
        break
    done
    why=""
    if [ "$ready" -lt 8 ]; then
        why="only $ready of 8 ranks reached the loop"
    else
        sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
        if [ "$KIND" = kill ]; then
            # every process of the host but its anchor (1) and slurmd, in one kill
            t_fail=$(date +%s.%N)
            x "$victim" sh -c 'pids=""; for d in /proc/[0-9]*; do p=${d#/proc/};
                [ "$p" = 1 ] || [ "$p" = $$ ] && continue;
                case $(cat "$d/comm" 2>/dev/null) in slurmd | sleep | "") continue ;; esac;
                pids="$pids $p"; done; kill -KILL $pids' 2>>"$log"
        else
            # set up again below, or on the way out if the script is stopped first
            trap 'x "$victim" ip link set eth0 up' EXIT
            t_fail=$(date +%s.%N)
            x "$victim" ip link set eth0 down || why="cannot set $victim's eth0 down"
        fi
    fi
    # The launch is judged by the ranks' records alone. Once every rank that must write one has
    # written its finalize's line, the job is cancelled rather than left to srun's --wait,
    # which after a cut link was 20 of a launch's 30 s.
    cancelled=""
    if [ -z "$why" ]; then
        for _ in $(seq 1 1200); do
            kill -0 "$srun_pid" 2>/dev/null || break
            missing=0
            for r in $(seq 0 7); do
                owes_record "$r" || continue
                grep -q 'fin_s=' "$run/rank-$r" 2>/dev/null || missing=$((missing + 1))
            done
            if [ "$missing" = 0 ]; then
                sleep 0.5 # the ranks' own exits, if they come
                jobs=$(x h1 squeue -h -o %i 2>/dev/null | tr '\n' ' ')
                if kill -0 "$srun_pid" 2>/dev/null && [ -n "$jobs" ]; then
                    # shellcheck disable=SC2086  # one word per job id
                    x h1 scancel $jobs 2>>"$log" && cancelled=", cancelled"
                    # srun then waits 7 s more for the cut host's step; the job is over
                    for _ in $(seq 1 20); do
                        kill -0 "$srun_pid" 2>/dev/null || break
                        sleep 0.1
                    done
                    kill -0 "$srun_pid" 2>/dev/null && kill -KILL -- -"$srun_pid" 2>/dev/null &&
                        cancelled="$cancelled, srun killed"
                fi
                break
            fi
            sleep 0.1
        done
    fi
    # (no "Killed" line from bash for a killed srun)
    { wait "$srun_pid"; } 2>/dev/null
    srun_rc=$?
    t_end=$(date +%s.%N)
    if [ "$KIND" = link ]; then
        x "$victim" ip link set eth0 up
        trap - EXIT
    fi
    took=$(fsub "$t_end" "$t_start")
    if [ -z "$why" ] && fgt "$took" 175; then
        why="srun did not end in 180 s"
    fi
    detect=0 fin=0
    if [ -z "$why" ]; then
        for r in $(seq 0 7); do
            rec="$run/rank-$r"
            if ! owes_record "$r"; then
                [ ! -f "$rec" ] || why="${why}rank $r of the killed host left a record; "
                continue
            fi
            [ -f "$rec" ] || {
                why="${why}rank $r has no record; "
                continue
            }
            status=$(rec_field "$rec" status)
            wrong=$(rec_field "$rec" wrong)
            t_err=$(rec_field "$rec" t_err)
            fin_s=$(rec_field "$rec" fin_s)
            case $status in UCOLL_ERR_PEER_FAILED | UCOLL_ERR_TIMED_OUT) ;; *)
                why="${why}rank $r: $status; "
                ;;
            esac
            [ "${wrong:-1}" = 0 ] || why="${why}rank $r: $wrong wrong results; "
            [ -n "$fin_s" ] || why="${why}rank $r: ucoll_finalize did not return; "
            d=$(fsub "${t_err:-0}" "$t_fail")
            if fgt "$d" "$BOUND"; then
                why="${why}rank $r: error $d s after the failure (bound $BOUND s); "
            elif fgt 0 "$d"; then
                why="${why}rank $r: error $d s before the failure; "
            fi
            fgt "$d" "$detect" && detect=$d
            fgt "${fin_s:-0}" "$fin" && fin=${fin_s:-0}
        done
    fi
    if [ -z "$why" ]; then
        echo "launch $i ($KIND $victim after ${delay_ms} ms): pass; max detection ${detect} s," \
            "max finalize ${fin} s, srun rc $srun_rc$cancelled, launch ${took} s"
        fgt "$detect" "$max_detect" && max_detect=$detect
        fgt "$fin" "$max_fin" && max_fin=$fin
    else
        failed=$((failed + 1))
        echo "launch $i ($KIND $victim after ${delay_ms} ms): FAIL: $why (records: $run)"
    fi
    # a cut-off host is down in Slurm until it answers again; after a kill the next srun
    # waits for the nodes itself (--immediate)
    if [ "$KIND" = link ]; then
        wait_idle "$victim" || failed=$((failed + 1))
    fi
done
echo "host faults ($KIND): $LAUNCHES launches, $failed failed; max detection ${max_detect} s," \
    "max finalize ${max_fin} s (UCOLL_TIMEOUT=$TIMEOUT_S, bound $BOUND s), $resumed resumes," \
    "$retried launches again after Slurm refused the allocation;" \
    "verdict:" \
    "$([ "$failed" = 0 ] && echo PASS || echo FAIL)"
[ "$failed" = 0 ]
