#!/usr/bin/env bash
# perf/exscan_bench.sh: a benchmark (not a test) of every exclusive-scan algorithm against the
# others, on this machine, with ucoll_perf:
#   1. median latency at np = 2..8 for 8 B .. 64 KiB (int64 sum);
#   2. the same with an artificially expensive (+) (ucoll_perf -S: a user op that spins
#      SPIN_NS per element), where the number of (+) on the critical path decides;
# next to each row the schedule's figures from ucoll_sched (rounds, max (+), path (+)).
# Usage: perf/exscan_bench.sh [BUILD_DIR] [OUT_CSV]   (defaults: ., /tmp/exscan_bench.csv)
# Environment: NPS="2 3 ...", SPIN_NS (default 1000), ITERS (default 200).
set -uo pipefail

build=${1:-.}
out=${2:-/tmp/exscan_bench.csv}
nps=${NPS:-"2 3 4 5 6 7 8"}
spin=${SPIN_NS:-1000}
iters=${ITERS:-200}
algs=linear,recursive-doubling,1-doubling,123-doubling,best-doubling,two-op-doubling,roughly-halving

if [ ! -x "$build/ucoll_perf" ] || [ ! -x "$build/ucoll_sched" ]; then
    echo "exscan_bench.sh: no ucoll_perf/ucoll_sched in $build: build first (make)" >&2
    exit 2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_oob_tcp_if_include=lo
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}

echo "np,op,algorithm,size,p50_us,rounds,max_ops,path_ops" >"$out"
run() { # np label extra-args...
    local np=$1 label=$2
    shift 2
    setsid timeout -k 5 600 mpirun -np "$np" "$build/ucoll_perf" -c exscan -a "$algs" -v \
        -n "$iters" -w 20 "$@" 2>/dev/null | grep -v '^algorithm,' |
        while IFS=, read -r alg size _count _it p50 _rest; do
            fig=$("$build/ucoll_sched" -c exscan -a "$alg" -p "$np" -m "$size" --predict 0,0,1)
            r=$(sed -n 's/.* rounds=\([0-9]*\).*/\1/p' <<<"$fig")
            x=$(sed -n 's/.* max_ops=\([0-9]*\).*/\1/p' <<<"$fig")
            y=$(sed -n 's/.* path_ops=\([0-9]*\).*/\1/p' <<<"$fig")
            echo "$np,$label,$alg,$size,$p50,$r,$x,$y"
        done >>"$out"
}
for np in $nps; do
    run "$np" sum -b 8 -e 65536 -f 8
    run "$np" "sum+${spin}ns" -b 8 -e 4096 -f 8 -S "$spin"
done

# one table per (op, size): algorithms side by side, np down the rows
python3 - "$out" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
algs = list(dict.fromkeys(r["algorithm"] for r in rows))
groups = collections.OrderedDict()
for r in rows:
    groups.setdefault((r["op"], int(r["size"])), {}).setdefault(int(r["np"]), {})[r["algorithm"]] = r
for (op, size), by_np in groups.items():
    print(f"\nexscan median latency (us), op={op}, {size} B; [rounds/max(+)/path(+)]")
    print("np | " + " | ".join(algs))
    for np_, d in sorted(by_np.items()):
        cells = []
        for a in algs:
            r = d.get(a)
            cells.append("-" if r is None else
                         f"{float(r['p50_us']):.1f} [{r['rounds']}/{r['max_ops']}/{r['path_ops']}]")
        print(f"{np_} | " + " | ".join(cells))
PY
echo "raw: $out"
