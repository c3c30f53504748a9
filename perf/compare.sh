#!/usr/bin/env bash
# perf/compare.sh: where ucoll stands on this machine. Runs, each launch under mpirun in a
# process group of its own with a timeout:
#   1. ucx_perftest -t tag_lat (server and client on loopback): the point-to-point floor, with
#      and without UCX peer error handling (-e: what ucoll uses for ranks on other hosts, or
#      everywhere with UCOLL_FAILURE_DETECTION=ucx);
#   2. perf/ucoll_vs_mpi on NP ranks for Open MPI's default components and for
#      `--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any`, the defaults once more
#      up to 4 KiB without the untimed barrier after each collective (ucoll_vs_mpi -D), then
#      exscan alone with Open MPI's exscan algorithms 1 (linear) and 2 (recursive doubling)
#      under both;
#   3. perf/ucoll_vs_mpi -P (one-way latency: bcasts with alternating roots, back to back)
#      for both settings, 8 B to 4 KiB;
#   4. ucoll_perf over ucoll's exscan algorithms on NPA ranks.
# and writes, under the output directory: tag_lat.csv, ucoll-vs-mpi-npNP.csv, pingpong-npNP.csv,
# exscan-algs-npNPA.csv and summary-npNP.txt (the run's conditions, the Open MPI settings of
# each label, and the np=NP ratios at 8 B, 4 KiB, 1 MiB, 16 MiB). perf/plot.sh draws them.
#
# Usage: perf/compare.sh [-B BUILD_DIR] [-o OUT_DIR] [-n NP] [-N NPA] [-e MAX_BYTES]
#                        [-t SECONDS] [-q]
#   -B  the build directory holding ucoll_perf and perf/ucoll_vs_mpi (default .)
#   -o  output directory (default: docs/ of the source tree)
#   -n  ranks of the ucoll/MPI comparison (default 2); -N  ranks of the exscan sweep (default 4)
#   -e  largest message size (default 16M); -t  timeout of one launch (default 900)
#   -q  quick: up to 64K, 200 iterations (a check that everything runs, not a measurement)
set -euo pipefail

srcdir=$(cd "$(dirname "$0")/.." && pwd)
build=. out="$srcdir/docs" np=2 npa=4 maxb=16M secs=900 quick=0
while getopts "B:o:n:N:e:t:qh" opt; do
    case $opt in
    B) build=$OPTARG ;;
    o) out=$OPTARG ;;
    n) np=$OPTARG ;;
    N) npa=$OPTARG ;;
    e) maxb=$OPTARG ;;
    t) secs=$OPTARG ;;
    q) quick=1 ;;
    h)
        sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: $0 [-B BUILD_DIR] [-o OUT_DIR] [-n NP] [-N NPA] [-e MAX] [-t SECS] [-q]" >&2
        exit 2
        ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
    echo "$0: unexpected argument '$1'" >&2
    exit 2
fi
build=$(cd "$build" && pwd)
perf="$build/ucoll_perf" vs="$build/perf/ucoll_vs_mpi" info="$build/ucoll_info"
for f in "$perf" "$vs"; do
    if [ ! -x "$f" ]; then
        echo "$0: $f not found: build first (perf/ucoll_vs_mpi needs Open MPI's mpicc), or" \
            "name the build directory with -B" >&2
        exit 2
    fi
done
for c in mpirun ucx_perftest; do
    command -v "$c" >/dev/null || {
        echo "$0: $c not found (Debian: openmpi-bin, ucx-utils)" >&2
        exit 2
    }
done
mkdir -p "$out"

export UCX_NET_DEVICES="${UCX_NET_DEVICES:-lo}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_oob_tcp_if_include="${OMPI_MCA_oob_tcp_if_include:-lo}"

iters=() perf_iters=()
if [ "$quick" = 1 ]; then
    maxb=64K
    iters=(-n 200 -w 20)
    perf_iters=(-n 200 -w 20)
fi

tmp=$(mktemp -d /tmp/ucoll-compare.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# launch LOG NP [MPIRUN_ARGS...] -- PROGRAM [ARGS...]
# Runs PROGRAM on NP ranks; its output (stdout and stderr) goes to LOG. Each rank appends its
# exit status to a file when it ends; once every rank has ended, a launcher still running
# 10 s later is killed (Open MPI 4.1's mpirun sometimes hangs there). Returns 0 if every rank
# exited with 0.
launch() {
    local log=$1 n=$2
    shift 2
    local -a margs=()
    while [ "$1" != -- ]; do
        margs+=("$1")
        shift
    done
    shift
    local done_file="$tmp/done.$RANDOM"
    : >"$done_file"
    # shellcheck disable=SC2016  # expanded by the rank's shell
    local wrap='d=$1; shift; rc=0; "$@" || rc=$?; echo "$rc" >>"$d"; exit "$rc"'
    echo "+ mpirun -np $n ${margs[*]} $*" >"$log"
    setsid timeout -k 5 "$secs" mpirun -np "$n" -x UCX_NET_DEVICES "${margs[@]}" \
        sh -c "$wrap" rankwrap "$done_file" "$@" >>"$log" 2>&1 </dev/null &
    local pid=$! grace=0
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$(wc -l <"$done_file")" -ge "$n" ]; then
            grace=$((grace + 1))
            if [ "$grace" -gt 50 ]; then
                echo "(every rank exited; mpirun hung and was killed)" >>"$log"
                kill -TERM -- "-$pid" 2>/dev/null || true
                sleep 1
                break
            fi
        fi
        sleep 0.2
    done
    local rc=0
    wait "$pid" || rc=$?
    kill -KILL -- "-$pid" 2>/dev/null || true
    if [ "$(wc -l <"$done_file")" -lt "$n" ]; then
        echo "(only $(wc -l <"$done_file") of $n ranks exited; launcher status $rc," \
            "timeout $secs s)" >>"$log"
    fi
    [ "$(wc -l <"$done_file")" -ge "$n" ] && ! grep -qv '^0$' "$done_file"
}

fail_log() {
    echo "compare: FAILED: $1 (log follows)" >&2
    tail -n 40 "$2" >&2
    exit 1
}

summary="$out/summary-np$np.txt"
{
    echo "# perf/compare.sh $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
    echo "# machine: $(uname -srm); $(nproc) cores;" \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "# load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# UCX $(ucx_info -v | sed -n 's/^# Version //p'), $(mpirun --version | head -n 1)," \
        "UCX_NET_DEVICES=$UCX_NET_DEVICES UCX_TLS=${UCX_TLS:-all}"
    if git -C "$srcdir" rev-parse --git-dir >/dev/null 2>&1; then
        echo "# ucoll source: commit $(git -C "$srcdir" log -1 --format=%h)$(git -C "$srcdir" \
            diff --quiet HEAD -- src ucx_transport bootstrap include || echo ' + local changes')"
    fi
} >"$summary"

# -- 1. ucx_perftest tag_lat: server in the background, client on 127.0.0.1, each pinned to a
# core of its own when there are two (as mpirun binds 2 ranks): on a loaded machine two
# spinning processes that share a core measure the scheduler's time slice instead. Three
# runs per size; the floor is the one with the lowest median.
echo "== ucx_perftest -t tag_lat (loopback; the best of 3 runs)"
tag_csv="$out/tag_lat.csv"
echo "mode,size,p50_us,avg_us" >"$tag_csv"
pin_server=() pin_client=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
    pin_server=(taskset -c 0) pin_client=(taskset -c 1)
fi
tag_lat() { # SIZE [-e]: prints "median average" of one run, nothing if it failed
    local port=$((20000 + RANDOM % 20000)) spid line
    local -a pt=(ucx_perftest -p "$port" -t tag_lat -s "$1" -n 20000 -w 1000 "${@:2}")
    setsid timeout -k 5 90 "${pin_server[@]}" "${pt[@]}" >"$tmp/server.log" 2>&1 </dev/null &
    spid=$!
    sleep 1
    timeout -k 5 90 "${pin_client[@]}" "${pt[@]}" 127.0.0.1 >"$tmp/client.log" 2>&1 \
        </dev/null || true
    wait "$spid" 2>/dev/null || true
    kill -KILL -- "-$spid" 2>/dev/null || true
    line=$(grep '^Final:' "$tmp/client.log" || true)
    # Final: iterations 50%ile average overall ...
    [ -z "$line" ] || awk '{print $3, $4}' <<<"$line"
}
for mode in plain errhandling; do
    eflag=()
    [ "$mode" = plain ] || eflag=(-e)
    for size in 8 4096; do
        best=""
        for _ in 1 2 3; do
            r=$(tag_lat "$size" "${eflag[@]}")
            [ -n "$r" ] || continue
            if [ -z "$best" ] || awk -v a="${r%% *}" -v b="${best%% *}" 'BEGIN {exit !(a < b)}'
            then
                best=$r
            fi
        done
        if [ -z "$best" ]; then
            echo "   $mode ${eflag[*]:+(-e) }$size B: no result" \
                "($(grep -m1 -E 'ERROR|rror' "$tmp/client.log" || echo 'timed out'))"
            echo "$mode,$size,," >>"$tag_csv"
            continue
        fi
        echo "$mode,$size,${best% *},${best#* }" >>"$tag_csv"
        echo "   $mode ${eflag[*]:+(-e) }$size B: median ${best% *} us, average ${best#* } us"
    done
done

# -- 2. ucoll vs Open MPI
vs_csv="$out/ucoll-vs-mpi-np$np.csv"
ucx_mca=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any)
first=1
run_vs() { # LABEL COLLS [MCA...] [-- UCOLL_VS_MPI_OPTIONS...]
    local label=$1 colls=$2
    shift 2
    local -a mca=() extra=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        mca+=("$1")
        shift
    done
    [ $# -eq 0 ] || {
        shift
        extra=("$@")
    }
    echo "== ucoll_vs_mpi, np=$np, $label: mpirun ${mca[*]} ucoll_vs_mpi -c $colls ${extra[*]}"
    local log="$tmp/vs-$label.log"
    launch "$log" "$np" "${mca[@]}" -- "$vs" -c "$colls" -e "$maxb" "${iters[@]}" "${extra[@]}" \
        -v -l "$label" || fail_log "ucoll_vs_mpi $label" "$log"
    echo "# $label: mpirun ${mca[*]:-(no --mca options)}, ucoll_vs_mpi ${extra[*]:-(no options)}" \
        "-e $maxb" >>"$summary"
    grep '^# MPI' "$log" | sed "s/^# /#   /" >>"$summary"
    if [ "$first" = 1 ]; then
        grep '^label,' "$log" >"$vs_csv"
        first=0
    fi
    grep "^$label," "$log" >>"$vs_csv"
    grep "^$label," "$log" | awk -F, '{
        printf "   %-10s %9s B  ucoll %9s us  MPI %9s us  ratio %s\n", $2, $3, $6, $7, $8}'
}
run_vs ompi-default exscan,scan,reduce,allreduce,bcast
run_vs ompi-ucx exscan,scan,reduce,allreduce,bcast "${ucx_mca[@]}"
# without the untimed barrier after each collective (ucoll_vs_mpi -D): the ranks start less
# aligned; only sizes UCX sends eagerly, where that cannot deadlock (see ucoll_vs_mpi.c)
saved_maxb=$maxb
maxb=4K
run_vs ompi-default-nodrain exscan,scan,reduce,allreduce,bcast -- -D
maxb=$saved_maxb
for alg in 1 2; do
    dyn=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_exscan_algorithm "$alg")
    run_vs "ompi-default-exscan$alg" exscan "${dyn[@]}"
    run_vs "ompi-ucx-exscan$alg" exscan "${ucx_mca[@]}" "${dyn[@]}"
done

# -- 2b. one-way latency without barrier skew: bcasts whose root alternates 0, 1, ... back to
# back (ucoll_vs_mpi -P), the ping-pong ucx_perftest's tag_lat also measures
# (this machine's speed drifts by minutes, so tag_lat is taken again right before and after)
pp_csv="$out/pingpong-np$np.csv"
echo "label,collective,size,count,iterations,ucoll_us,mpi_us,ratio" >"$pp_csv"
pp_floor_before=$(tag_lat 8 | awk '{print $1}')
for label in ompi-default ompi-ucx; do
    mca=()
    [ "$label" = ompi-default ] || mca=("${ucx_mca[@]}")
    echo "== ucoll_vs_mpi -P (bcast ping-pong), np=$np, $label: mpirun ${mca[*]}"
    log="$tmp/pp-$label.log"
    launch "$log" "$np" "${mca[@]}" -- "$vs" -P -b 8 -e 4K -f 8 -v -l "$label" ||
        fail_log "ucoll_vs_mpi -P $label" "$log"
    grep "^$label,pingpong," "$log" | tee -a "$pp_csv" | awk -F, '{
        printf "   %9s B  ucoll %7s us  MPI %7s us  ratio %s\n", $3, $6, $7, $8}'
done
pp_floor_after=$(tag_lat 8 | awk '{print $1}')
echo "   ucx_perftest tag_lat 8 B just before: ${pp_floor_before:-none} us, just after:" \
    "${pp_floor_after:-none} us"

# -- 3. ucoll's exscan algorithms
algs=auto
if [ -x "$info" ]; then
    algs=$("$info" -a | awk '/^[a-z]/ {c = $1} c == "exscan:" && /^  / && $1 !~ /:/ {print $1}' |
        paste -sd, -)
fi
alg_csv="$out/exscan-algs-np$npa.csv"
echo "== ucoll_perf -c exscan on $npa ranks: $algs"
log="$tmp/algs.log"
launch "$log" "$npa" -- "$perf" -c exscan -a "$algs" -e "$maxb" "${perf_iters[@]}" -v ||
    fail_log "ucoll_perf exscan algorithms" "$log"
grep -E '^(algorithm,|[a-z0-9:-]+,[0-9])' "$log" >"$alg_csv"

# -- the picture at np: ratios at 8 B, 4 KiB, 1 MiB and 16 MiB
{
    echo "# ratios ucoll/MPI of the median latencies (max over ranks per iteration), np=$np"
    awk -F, -v out=summary '
        NR == 1 { next }
        $3 == 8 || $3 == 4096 || $3 == 1048576 || $3 == 16777216 {
            printf "%-22s %-9s %9s B  ucoll %10s us  MPI %10s us  ratio %6s\n",
                $1, $2, $3, $6, $7, $8
        }' "$vs_csv"
    awk -F, 'NR > 1 && $1 == "plain" && $2 == 8 {print $3}' "$tag_csv" >"$tmp/floor"
    awk -F, 'NR > 1 && $1 == "errhandling" && $2 == 8 {print $3}' "$tag_csv" >"$tmp/floor_e"
    awk -F, -v floor="$(cat "$tmp/floor")" -v floor_e="$(cat "$tmp/floor_e")" '
        ($1 == "ompi-default" || $1 == "ompi-default-nodrain") && $2 == "exscan" && $3 == 8 {
            printf "exscan 8 B (%s): ucoll %s us = %.2f x ucx_perftest tag_lat (%s us median;" \
                   " %s us with -e error handling); MPI %s us = %.2f x\n", $1, $6,
                   (floor > 0 ? $6 / floor : 0), floor, floor_e, $7, (floor > 0 ? $7 / floor : 0)
        }' "$vs_csv"
    echo "# one-way latency, 8 B (ucoll_vs_mpi -P: alternating-root bcast ping-pong, best block);"
    echo "# tag_lat taken just before and after it: ${pp_floor_before:-none} and" \
        "${pp_floor_after:-none} us; the ratio uses their mean"
    awk -F, -v floor="$(awk -v a="${pp_floor_before:-0}" -v b="${pp_floor_after:-0}" \
        'BEGIN {print (a > 0 && b > 0) ? (a + b) / 2 : a + b}')" '
        NR > 1 && $3 == 8 {
            printf "%-13s ucoll %s us = %.2f x tag_lat (%s us); MPI %s us = %.2f x; " \
                   "ucoll/MPI %s\n", $1, $6, (floor > 0 ? $6 / floor : 0), floor, $7,
                   (floor > 0 ? $7 / floor : 0), $8
        }' "$pp_csv"
} | tee -a "$summary"
echo "compare: wrote $tag_csv, $vs_csv, $pp_csv, $alg_csv, $summary"
