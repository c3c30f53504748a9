#!/usr/bin/env bash
# perf/reduce_bench.sh: a benchmark (not a test) of large-vector allreduce and reduce on this
# machine with ucoll_perf: rhrd (half-vector method for p != 2^k) against rhrd-classic and the
# small-vector algorithm, pipelined (UCOLL_SEGMENT_SIZE=SEG) and not (0), 64 KiB .. MAX bytes,
# with the schedule's volume (bytes on the critical path, from ucoll_sched) next to the time.
# Usage: perf/reduce_bench.sh [BUILD_DIR] [OUT_CSV]   (defaults: ., /tmp/reduce_bench.csv)
# Environment: NPS (default "2 3 5 6 7"), MAX (default 64M), SEG (default 65536), ITERS (10).
set -uo pipefail

build=${1:-.}
out=${2:-/tmp/reduce_bench.csv}
nps=${NPS:-"2 3 5 6 7"}
max=${MAX:-64M}
seg=${SEG:-65536}
iters=${ITERS:-10}

if [ ! -x "$build/ucoll_perf" ] || [ ! -x "$build/ucoll_sched" ]; then
    echo "reduce_bench.sh: no ucoll_perf/ucoll_sched in $build: build first (make)" >&2
    exit 2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_oob_tcp_if_include=lo
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}

echo "np,coll,segment,algorithm,size,p50_us,avg_us,volume_bytes" >"$out"
for np in $nps; do
    for coll in allreduce reduce; do
        small=recursive-doubling
        [ "$coll" = reduce ] && small=binomial
        for s in "$seg" 0; do
            UCOLL_SEGMENT_SIZE=$s setsid timeout -k 5 1800 mpirun -x UCOLL_SEGMENT_SIZE -np "$np" \
                "$build/ucoll_perf" -c "$coll" -a "rhrd,rhrd-classic,$small" -b 64K -e "$max" \
                -f 4 -n "$iters" -w 2 -v 2>/dev/null | grep -v '^algorithm,' |
                while IFS=, read -r alg size _count _it p50 avg _rest; do
                    v=$("$build/ucoll_sched" -c "$coll" -a "$alg" -p "$np" -m "$size" |
                        sed -n 's/.* volume=\([0-9]*\).*/\1/p')
                    echo "$np,$coll,$s,$alg,$size,$p50,$avg,$v"
                done >>"$out"
        done
    done
done

python3 - "$out" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
t = collections.OrderedDict()
for r in rows:
    t.setdefault((r["coll"], int(r["np"]), int(r["size"])), {})[(r["algorithm"], r["segment"])] = r
print("median us (volume MB on the critical path); seg = UCOLL_SEGMENT_SIZE, 0 = unsegmented")
for (coll, np_, size), d in t.items():
    cells = [f"{a} seg={s}: {float(r['p50_us']):.0f} ({int(r['volume_bytes'])/2**20:.1f})"
             for (a, s), r in sorted(d.items())]
    print(f"{coll} np={np_} {size >> 10} KiB | " + " | ".join(cells))
PY
echo "raw: $out"
