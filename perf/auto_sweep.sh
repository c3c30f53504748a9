#!/usr/bin/env bash
# perf/auto_sweep.sh: a benchmark (not a test) of how close `auto` comes to the fastest
# algorithm. For every NP and collective it runs ucoll_perf -I over auto and every algorithm
# the build registers for that collective (ucoll_info -a; node-aware, which needs several
# hosts, and power-of-two-only algorithms on other sizes are left out): each on a
# communicator of its own, their iterations interleaved, so that the machine's changes of
# speed hit all alike. It makes REPS launches and keeps each (algorithm, size)'s smallest
# median. It writes the CSV and prints, per (np, coll, size),
# auto's time, the fastest algorithm and auto / fastest, and auto / fastest within each launch
# (the algorithms of one launch are interleaved, so they met the same machine: on this VM,
# whose speed changes every few minutes, that is the fair comparison). A cell is SLOW where
# auto is more than 1.10x the fastest in every launch; the count of cells above 1.10 by the
# smallest medians (which may come from different launches) is printed as well.
#
# Usage: perf/auto_sweep.sh [-B BUILD_DIR] [-o OUT_CSV] [-n "NPS"] [-c "COLLS"] [-b MIN]
#                           [-e MAX] [-f FACTOR] [-r REPS] [-d DTYPE] [-t SECONDS]
#   -B  build directory holding ucoll_perf and ucoll_info (default .)
#   -o  CSV of every measurement (default /tmp/auto_sweep.csv); the table goes to stdout
#   -n  rank counts (default "2 3")
#   -c  collectives (default: allreduce reduce bcast exscan scan allgather
#       reduce_scatter_block alltoall gather scatter)
#   -b, -e, -f  sizes from MIN to MAX by FACTOR (default 16, 16M, 4: 64K, 1M and 16M among
#       them); for the block collectives the bytes of one block, up to 4M
#   -r  launches per (np, coll), the smallest median kept (default 2)
#   -d  datatype (default float32, op sum)
#   -t  timeout of one launch in seconds (default 600)
set -euo pipefail

build=. out=/tmp/auto_sweep.csv nps="2 3" min=16 max=16M factor=4 reps=2 dtype=float32 secs=600
colls="allreduce reduce bcast exscan scan allgather reduce_scatter_block alltoall gather scatter"
while getopts "B:o:n:c:b:e:f:r:d:t:h" opt; do
    case $opt in
    B) build=$OPTARG ;;
    o) out=$OPTARG ;;
    n) nps=$OPTARG ;;
    c) colls=$OPTARG ;;
    b) min=$OPTARG ;;
    e) max=$OPTARG ;;
    f) factor=$OPTARG ;;
    r) reps=$OPTARG ;;
    d) dtype=$OPTARG ;;
    t) secs=$OPTARG ;;
    h)
        sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: $0 [-B BUILD] [-o CSV] [-n NPS] [-c COLLS] [-b MIN] [-e MAX] [-f F]" \
            "[-r REPS] [-d DTYPE] [-t SECS]" >&2
        exit 2
        ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
    echo "$0: unexpected argument '$1'" >&2
    exit 2
fi
for f in "$build/ucoll_perf" "$build/ucoll_info"; do
    if [ ! -x "$f" ]; then
        echo "$0: $f not found: build first, or name the build directory with -B" >&2
        exit 2
    fi
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_oob_tcp_if_include=lo
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}

# the algorithms ucoll_info lists under "COLL:", without auto and node-aware; pipeline[:K]
# as plain pipeline (its k from the model); doubling:Q left out (best-doubling et al. name its
# useful values); [p = 2^k] ones only where NP is a power of two
algorithms() {
    local coll=$1 np=$2 pow2=0
    [ $((np & (np - 1))) -eq 0 ] && pow2=1
    "$build/ucoll_info" -a | awk -v c="$coll:" -v pow2="$pow2" '
        /^[a-z_]+:$/ { on = ($1 == c); next }
        on && NF > 0 {
            name = $1
            if (name == "auto" || name == "node-aware" || name ~ /:Q$/) next
            if (!pow2 && $0 ~ /p = 2\^k/) next
            sub(/\[:K\]$/, "", name)
            printf "%s%s", sep, name; sep = ","
        }'
}

block_coll() {
    case $1 in
    allgather | allgatherv | reduce_scatter_block | reduce_scatter | alltoall | alltoallv | \
        gather | gatherv | scatter | scatterv) return 0 ;;
    esac
    return 1
}

echo "np,coll,algorithm,size,p50_us,launch" >"$out"
for np in $nps; do
    for coll in $colls; do
        algs=$(algorithms "$coll" "$np")
        if [ -z "$algs" ]; then
            echo "$0: ucoll_info lists no algorithm for $coll" >&2
            exit 1
        fi
        top=$max
        block_coll "$coll" && [ "$(numfmt --from=iec "$max")" -gt 4194304 ] && top=4M
        for rep in $(seq "$reps"); do
            if ! setsid timeout -k 5 "$secs" mpirun -x UCX_NET_DEVICES -np "$np" \
                "$build/ucoll_perf" -I -c "$coll" -a "auto,$algs" -b "$min" -e "$top" -f "$factor" \
                -d "$dtype" -v >/tmp/auto_sweep.$$ 2>/tmp/auto_sweep.$$.err; then
                echo "$0: np=$np $coll launch $rep failed:" >&2
                tail -5 /tmp/auto_sweep.$$.err >&2
                exit 1
            fi
            awk -F, -v np="$np" -v c="$coll" -v l="$rep" \
                'NR > 1 { print np "," c "," $1 "," $2 "," $5 "," l }' \
                /tmp/auto_sweep.$$ >>"$out"
        done
    done
done
rm -f /tmp/auto_sweep.$$ /tmp/auto_sweep.$$.err

python3 - "$out" <<'PY'
import collections, csv, sys
best = collections.OrderedDict()
launches = collections.defaultdict(dict)  # (np, coll, size) -> launch -> {alg: us}
for r in csv.DictReader(open(sys.argv[1])):
    k = (int(r["np"]), r["coll"], int(r["size"]))
    d = best.setdefault(k, {})
    t = float(r["p50_us"])
    d[r["algorithm"]] = min(t, d.get(r["algorithm"], t))
    launches[k].setdefault(r.get("launch") or "1", {})[r["algorithm"]] = t
slow = slow_min = 0
print(f"{'np':>2} {'coll':<21} {'bytes':>9} {'auto_us':>10} {'fastest':<19} {'its_us':>10}"
      f" {'auto/fastest':>12}  per launch")
for (np_, coll, size), d in best.items():
    auto = d.pop("auto")
    name, t = min(d.items(), key=lambda x: x[1])
    ratio = auto / t
    per = []
    for algs in launches[(np_, coll, size)].values():
        others = [v for a, v in algs.items() if a != "auto"]
        if "auto" in algs and others:
            per.append(algs["auto"] / min(others))
    is_slow = bool(per) and min(per) > 1.10
    slow += is_slow
    slow_min += ratio > 1.10
    flag = " SLOW" if is_slow else ""
    print(f"{np_:>2} {coll:<21} {size:>9} {auto:>10.2f} {name:<19} {t:>10.2f} {ratio:>12.2f}  "
          + " ".join(f"{x:.2f}" for x in per) + flag)
print(f"cells where auto is more than 10% slower than the fastest in every launch: {slow} of "
      f"{len(best)}")
print(f"cells above 1.10 by the smallest medians of all launches: {slow_min} of {len(best)}")
PY
