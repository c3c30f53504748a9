#!/usr/bin/env bash
# perf/np2_small.sh: instructions per call of the small-message collectives at np=2, a figure
# that does not depend on the machine's load. perf/np2_calls.c, built against the library of a
# build directory, runs on 2 ranks, one of them under `valgrind --tool=callgrind`, and calls
# allreduce, reduce, exscan, scan and bcast (int64 sum, root 0; 50 untimed calls first), each
# after a barrier and, on the measured rank, a sleep (-s, 30 ms): the measured rank arrives
# last and finds its peer's messages there, so its count holds no waiting. Run once with N1 and once with N2 calls of each;
# (inclusive Ir of ucoll_COLL at N2 - at N1) / (N2 - N1) is the cost of one call, one-time
# costs (connections, first-touch paths) cancelling out. A peer that loses its core for longer
# than the sleep still makes the measured rank poll: each figure is the least of K launches.
#
# Usage: perf/np2_small.sh [-B BUILD_DIR] [-r RANK] [-b BYTES] [-1 N1] [-2 N2] [-k K] [-s MS]
#   -B  build directory (in-tree: include/ucoll.h and .libs/libucoll.so; default .)
#   -r  the rank measured: 0 (the root of reduce and bcast, default) or 1
#   -b  bytes per rank, a multiple of 8 up to 4096 (default 8)
#   -1, -2  the two call counts (default 20 and 100); -k  launches per figure (default 3)
#   -s  the measured rank's sleep before each call, in ms (default 30: on a loaded machine a
#       peer that yields its core may come back only after several ms)
# Prints a line per collective: COLL Ir/call. Two builds: run it twice, -B each.
set -euo pipefail

srcdir=$(cd "$(dirname "$0")/.." && pwd)
build=. rank=0 bytes=8 n1=20 n2=100 reps=3 sleep_ms=30
while getopts "B:r:b:1:2:k:s:h" opt; do
    case $opt in
    B) build=$OPTARG ;;
    r) rank=$OPTARG ;;
    b) bytes=$OPTARG ;;
    1) n1=$OPTARG ;;
    2) n2=$OPTARG ;;
    k) reps=$OPTARG ;;
    s) sleep_ms=$OPTARG ;;
    h)
        sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: $0 [-B BUILD_DIR] [-r RANK] [-b BYTES] [-1 N1] [-2 N2] [-k K] [-s MS]" >&2
        exit 2
        ;;
    esac
done
build=$(cd "$build" && pwd)
lib="$build/.libs/libucoll.so"
if [ ! -f "$lib" ] || [ ! -f "$build/include/ucoll.h" ]; then
    echo "$0: no $lib or $build/include/ucoll.h: build first, or name the build with -B" >&2
    exit 2
fi
for c in mpirun valgrind callgrind_annotate cc; do
    command -v "$c" >/dev/null || {
        echo "$0: $c not found (Debian: openmpi-bin, valgrind, gcc)" >&2
        exit 2
    }
done
case $rank in 0 | 1) ;; *)
    echo "$0: -r takes 0 or 1" >&2
    exit 2
    ;;
esac
count=$((bytes / 8))

export UCX_NET_DEVICES="${UCX_NET_DEVICES:-lo}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_oob_tcp_if_include="${OMPI_MCA_oob_tcp_if_include:-lo}"

tmp=$(mktemp -d /tmp/ucoll-np2small.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prog="$tmp/np2_calls"
cc -std=c11 -O2 -I"$build/include" "$srcdir/perf/np2_calls.c" -L"$build/.libs" -lucoll \
    -Wl,-rpath,"$build/.libs" -o "$prog"

colls=(allreduce reduce exscan scan bcast)

# one launch with N calls of each: prints the inclusive Ir of each ucoll_COLL, in colls' order
measure() {
    local n=$1 out="$tmp/cg.$1" log="$tmp/log.$1"
    local -a args=("$rank" "$n" 50 "$count" "$sleep_ms")
    local -a cg=(valgrind --tool=callgrind -q --callgrind-out-file="$out" "$prog" "${args[@]}")
    local -a plain=("$prog" "${args[@]}") first second
    if [ "$rank" = 0 ]; then first=("${cg[@]}") second=("${plain[@]}"); else
        first=("${plain[@]}") second=("${cg[@]}"); fi
    rm -f "$out"
    if ! setsid timeout -k 5 300 mpirun -x UCX_NET_DEVICES -np 1 "${first[@]}" : \
        -np 1 "${second[@]}" >"$log" 2>&1 </dev/null || [ ! -s "$out" ]; then
        echo "$0: the launch with N=$n failed:" >&2
        cat "$log" >&2
        exit 1
    fi
    local c
    for c in "${colls[@]}"; do
        callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
            awk -v fn="ucoll_$c" '!found && $0 ~ (":" fn " ") {
                s = $1; gsub(",", "", s); found = 1; print s }
                END { if (!found) print "none" }'
    done
}

# per collective, the least over reps launches
least() {
    local n=$1 i j
    local -a best=() v
    for ((i = 0; i < reps; i++)); do
        mapfile -t v < <(measure "$n")
        for j in "${!colls[@]}"; do
            if [ "${v[j]:-none}" = none ]; then
                echo "$0: no ucoll_${colls[j]} in the profile" >&2
                exit 1
            fi
            if [ -z "${best[j]:-}" ] || [ "${v[j]}" -lt "${best[j]}" ]; then best[j]=${v[j]}; fi
        done
    done
    echo "${best[*]}"
}

echo "# $build, rank $rank: instructions per call, $bytes B, np=2 (N = $n1, $n2; least of $reps)"
read -r -a a <<<"$(least "$n1")"
read -r -a b <<<"$(least "$n2")"
for j in "${!colls[@]}"; do
    echo "${colls[j]} $(((b[j] - a[j]) / (n2 - n1)))"
done
