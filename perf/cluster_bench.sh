#!/usr/bin/env bash
# perf/cluster_bench.sh DIR [ROUNDS]: node-aware against flat on the namespace cluster that
# tests/cluster/cluster-up.sh DIR started (4 hosts), from the built tree this script belongs to.
# Every launch is one srun on h1 (--mpi=pmix, ranks in blocks, UCX_NET_DEVICES=eth0) of
# ucoll_perf with CSV output (median of the iterations, the slowest rank's per iteration):
#   1. allreduce and exscan at 4 hosts x 2 ranks, 8 B and 1 MiB, node-aware against the flat
#      algorithms auto picks among (allreduce recursive-doubling, rhrd, rs-ag; exscan
#      roughly-halving, pipeline);
#   2. the cost of one message across the bridge against one through the rings: bcast binomial
#      on 2 ranks, on two hosts (UCX over TCP on the veth/bridge) and on one host (ucoll's rings
#      for 8 B; UCX shared memory for 1 MiB).
# ROUNDS (default 3) launches of each, the algorithms' order alternating from one round to the
# next so that the machine's fast and slow phases fall on both; the table gives the median over
# rounds and node-aware's time divided by each flat one's (below 1: node-aware faster).
# Writes DIR/bench/*.csv and prints the table. A measurement, not a test: exit 0 unless a launch
# failed.
set -uo pipefail
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
    echo "usage: perf/cluster_bench.sh DIR [ROUNDS]" >&2
    exit 2
fi
DIR=$(cd "$1" && pwd -P) || exit 2
ROUNDS=${2:-3}
HERE=$(cd -P "$(dirname "$0")" && pwd -P)
TOP=$(cd -P "$HERE/.." && pwd -P)
cd "$TOP" || exit 2
[ -x ./ucoll_perf ] || {
    echo "cluster_bench: ./ucoll_perf is not built" >&2
    exit 1
}
OUT="$DIR/bench"
mkdir -p "$OUT" || exit 1
export UCX_NET_DEVICES=eth0
rc=0

# run TAG SRUN_OPTS -- UCOLL_PERF_ARGS...: 8 B and 1 MiB, one launch each; appends
# "TAG,<csv row>" to $OUT/runs.csv
run() {
    local tag=$1 opts=$2
    shift 3
    run_size "$tag" "$opts" -- "$@" -b 8 -e 8
    run_size "$tag" "$opts" -- "$@" -b 1M -e 1M
}
run_size() {
    local tag=$1 opts=$2
    shift 3
    local -a o
    read -ra o <<<"$opts"
    if ! timeout -k 10 600 "$TOP/tests/cluster/cluster-exec.sh" "$DIR" h1 srun --mpi=pmix \
        --overcommit --kill-on-bad-exit=1 --immediate=60 --distribution=block "${o[@]}" \
        ./ucoll_perf -v "$@" </dev/null >"$OUT/last.log" 2>&1; then
        echo "cluster_bench: $tag failed:" >&2
        tail -n 5 "$OUT/last.log" >&2
        rc=1
        return
    fi
    grep -E '^[a-z].*,[0-9]' "$OUT/last.log" | grep -v '^algorithm,' | sed "s/^/$tag,/" >>"$OUT/runs.csv"
}

: >"$OUT/runs.csv"
for round in $(seq 1 "$ROUNDS"); do
    ar="node-aware,recursive-doubling,rhrd,rs-ag" ex="node-aware,roughly-halving,pipeline"
    if [ $((round % 2)) = 0 ]; then
        ar="rs-ag,rhrd,recursive-doubling,node-aware" ex="pipeline,roughly-halving,node-aware"
    fi
    run allreduce "-N 4 -n 8" -- -c allreduce -a "$ar" -n 400 -w 40
    run exscan "-N 4 -n 8" -- -c exscan -a "$ex" -n 400 -w 40
    if [ $((round % 2)) = 1 ]; then
        run bridge "-N 2 -n 2" -- -c bcast -a binomial -n 2000 -w 100
        run rings "-N 1 -n 2" -- -c bcast -a binomial -n 2000 -w 100
    else
        run rings "-N 1 -n 2" -- -c bcast -a binomial -n 2000 -w 100
        run bridge "-N 2 -n 2" -- -c bcast -a binomial -n 2000 -w 100
    fi
done

# tag,algorithm,size,count,iterations,p50_us,...: medians over rounds, then the ratios
awk -F, '
    { key = $1 "," $2 "," $3; v[key] = v[key] " " $6; n[key]++ }
    function median(s,    a, k, i, j, t) {
        k = split(s, a, " ")
        for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j] < a[j - 1]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    END {
        for (key in v) { m[key] = median(v[key]); split(key, f, ","); sizes[f[1] "," f[3]] = 1 }
        printf "%-10s %-8s %-20s %12s %10s\n", "what", "bytes", "algorithm", "median_us", "na/flat"
        for (key in m) {
            split(key, f, ",")
            na = m[f[1] ",node-aware," f[3]]
            ratio = (f[2] != "node-aware" && na != "") ? sprintf("%.2f", na / m[key]) : "-"
            printf "%-10s %-8s %-20s %12.2f %10s\n", f[1], f[3], f[2], m[key], ratio | "sort"
        }
        close("sort")
        for (s in sizes) {
            split(s, f, ",")
            if (f[1] == "bridge" && m["rings,binomial," f[2]] > 0)
                printf "bridge/rings per message at %s B: %.2f\n", f[2], m["bridge,binomial," f[2]] / m["rings,binomial," f[2]]
        }
    }' "$OUT/runs.csv" | tee "$OUT/summary.txt"
exit $rc
