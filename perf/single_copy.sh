#!/usr/bin/env bash
# perf/single_copy.sh: a benchmark (not a test) of single copy on one host: ucoll_perf's median
# latency of allreduce, reduce, bcast, exscan and scan (float32 sum) from 64 KiB to 16 MiB by 2
# (auto's single copy starts at 128 KiB) on NP ranks (default 2 and 3), with UCX's two copies
# (UCOLL_SINGLE_COPY_MIN=0) and with single copy (UCOLL_SINGLE_COPY_MIN=$SC, default 65536;
# SC=auto measures the default's rules),
# the two settings alternating launch by launch, REPS rounds (default 3); prints per cell the
# smaller median of each setting and their ratio (single / two copies; below 1: single copy is
# faster).
#
# Usage: perf/single_copy.sh [BUILD_DIR]   Environment: NPS, REPS, SC
set -euo pipefail
build=$(cd "${1:-.}" && pwd)
nps=${NPS:-"2 3"} reps=${REPS:-3} sc=${SC:-65536}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_oob_tcp_if_include=lo
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
out=$(mktemp /tmp/single_copy.XXXXXX)
for ((r = 0; r < reps; r++)); do
    for np in $nps; do
        for coll in allreduce reduce bcast exscan scan; do
            for min in 0 "$sc"; do
                timeout -k 5 300 mpirun -np "$np" -x UCOLL_SINGLE_COPY_MIN="$min" \
                    "$build/ucoll_perf" -c "$coll" -d float32 -b 64K -e 16M -f 2 -v 2>/dev/null |
                    awk -F, -v np="$np" -v c="$coll" -v m="$min" \
                        '$1 != "algorithm" { print np, c, $2, m, $5 }' >>"$out"
            done
        done
    done
done
echo "np collective bytes two_copies_us single_copy_us single/two"
awk -v sc="$sc" '{
        k = $1 " " $2 " " $3
        if (!(k in seen)) { order[++n] = k; seen[k] = 1 }
        if ($4 == 0) { if (!(k in a) || $5 < a[k]) a[k] = $5 }
        else if (!(k in b) || $5 < b[k]) b[k] = $5
    }
    END { for (i = 1; i <= n; i++) { k = order[i]
            printf "%s %.1f %.1f %.2f\n", k, a[k], b[k], b[k] / a[k] } }' "$out"
rm -f "$out"
