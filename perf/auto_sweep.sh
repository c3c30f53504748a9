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
# A flagged cell (SLOW or WRONG PICK) is then measured again, CONFIRM launches of its size
# alone with auto, every algorithm it picked and every launch's fastest interleaved, and
# analysed the same way: the confirmation table says which flags held on a second look and
# which were one launch's noise (on this VM a cell's fastest algorithm can swap between two
# launches minutes apart, e.g. at 3 ranks on 2 CPUs).
# Each launch runs with UCOLL_PRINT_ALG=1, so the table also names the algorithm auto picked
# (pick; launches that picked differently are joined by "/") and, per launch, pick/fastest:
# the picked algorithm's own time (its named entry in the same launch) over the fastest's. A
# cell is a WRONG PICK where, in every launch, that is above 1.10 and the pick's schedule
# (ucoll_sched --ranks) is not that launch's fastest one's: two names for one schedule
# (gather's linear and binomial at 2 ranks) differ only by where their communicators fell (in
# ucoll_perf -I a communicator's place among the others has cost up to 0.1 us per call here,
# whatever its algorithm). A SLOW cell that is no wrong pick lost its time outside auto's
# choice.
#
# Usage: perf/auto_sweep.sh [-B BUILD_DIR] [-o OUT_CSV] [-n "NPS"] [-c "COLLS"] [-b MIN]
#                           [-e MAX] [-f FACTOR] [-r REPS] [-k CONFIRM] [-d DTYPE]
#                           [-t SECONDS] [-M] [-C STATE]
#   -B  build directory holding ucoll_perf, ucoll_info and ucoll_sched (default .)
#   -o  CSV of every measurement (default /tmp/auto_sweep.csv), auto's picks beside it
#       (OUT_CSV without .csv, then -picks.csv); the table goes to stdout
#   -n  rank counts (default "2 3")
#   -c  collectives (default: allreduce reduce bcast exscan scan allgather
#       reduce_scatter_block alltoall gather scatter)
#   -b, -e, -f  sizes from MIN to MAX by FACTOR (default 16, 16M, 4: 64K, 1M and 16M among
#       them); for the block collectives the bytes of one block, up to 4M
#   -r  launches per (np, coll), the smallest median kept (default 2)
#   -k  launches per flagged cell in the confirmation pass (default 3; 0: none)
#   -d  datatype (default float32, op sum)
#   -t  timeout of one launch in seconds (default 600)
#   -M  buffers from ucoll_mem_alloc (ucoll_perf -M); with UCOLL_SINGLE_COPY_MIN=regions in the
#       environment, auto is measured where perf/targets.sh MEM_ALLOC=1 measures it
#   -C  the caches when each timed call starts (ucoll_perf -C: warm, written, dirty[:BYTES],
#       clean[:BYTES]); default warm
# Every UCOLL_* variable of this shell reaches every rank.
set -euo pipefail

build=. out=/tmp/auto_sweep.csv nps="2 3" min=16 max=16M factor=4 reps=2 confirm=3 dtype=float32 secs=600
perf_flags=()
colls="allreduce reduce bcast exscan scan allgather reduce_scatter_block alltoall gather scatter"
while getopts "B:o:n:c:b:e:f:r:k:d:t:MC:h" opt; do
    case $opt in
    B) build=$OPTARG ;;
    o) out=$OPTARG ;;
    n) nps=$OPTARG ;;
    c) colls=$OPTARG ;;
    b) min=$OPTARG ;;
    e) max=$OPTARG ;;
    f) factor=$OPTARG ;;
    r) reps=$OPTARG ;;
    k) confirm=$OPTARG ;;
    d) dtype=$OPTARG ;;
    t) secs=$OPTARG ;;
    M) perf_flags+=(-M) ;;
    C) perf_flags+=(-C "$OPTARG") ;;
    h)
        sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: $0 [-B BUILD] [-o CSV] [-n NPS] [-c COLLS] [-b MIN] [-e MAX] [-f F]" \
            "[-r REPS] [-k CONFIRM] [-d DTYPE] [-t SECS] [-M] [-C STATE]" >&2
        exit 2
        ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
    echo "$0: unexpected argument '$1'" >&2
    exit 2
fi
for v in "$reps" "$confirm"; do
    case $v in
    '' | *[!0-9]*)
        echo "$0: -r and -k take a number of launches, not '$v'" >&2
        exit 2
        ;;
    esac
done
if [ "$reps" -lt 1 ]; then
    echo "$0: -r must be at least 1" >&2
    exit 2
fi
for f in "$build/ucoll_perf" "$build/ucoll_info" "$build/ucoll_sched"; do
    if [ ! -x "$f" ]; then
        echo "$0: $f not found: build first, or name the build directory with -B" >&2
        exit 2
    fi
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_oob_tcp_if_include=lo
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
fwd=(-x UCX_NET_DEVICES -x UCOLL_PRINT_ALG)
for v in $(compgen -e | grep -E '^UCOLL_'); do
    [ "$v" = UCOLL_PRINT_ALG ] || fwd+=(-x "$v")
done

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

# one launch of ucoll_perf -I: launch NP COLL ALGS MIN MAX FACTOR LABEL CSV PICKS appends its
# medians to CSV and auto's picks to PICKS, both tagged with LABEL
launch() {
    local np=$1 coll=$2 algs=$3 lo=$4 hi=$5 f=$6 label=$7 csv=$8 pk=$9
    if ! UCOLL_PRINT_ALG=1 setsid timeout -k 5 "$secs" mpirun "${fwd[@]}" -np "$np" \
        "$build/ucoll_perf" -I -c "$coll" -a "$algs" -b "$lo" -e "$hi" -f "$f" \
        -d "$dtype" ${perf_flags[@]+"${perf_flags[@]}"} -v \
        >/tmp/auto_sweep.$$ 2>/tmp/auto_sweep.$$.err; then
        echo "$0: np=$np $coll launch $label failed:" >&2
        # ucoll_perf's own complaint (a bad -C), else the launch's last words
        grep -m 3 '^ucoll_perf: ' /tmp/auto_sweep.$$.err >&2 ||
            grep -v '^ucoll: auto on comm' /tmp/auto_sweep.$$.err | tail -5 >&2
        exit 1
    fi
    awk -F, -v np="$np" -v c="$coll" -v l="$label" \
        'NR > 1 { print np "," c "," $1 "," $2 "," $5 "," l }' /tmp/auto_sweep.$$ >>"$csv"
    # "ucoll: auto on comm C (P ranks): COLL of N DTYPE (B B): ALG": the benchmark's own calls
    # (other collectives and dtypes) and world (comm 0) left out
    sed -nE "s/^ucoll: auto on comm ([0-9]+) \(${np} ranks\): ${coll} of [0-9]+ ${dtype} \(([0-9]+) B\): (.*)$/\1 \2 \3/p" \
        /tmp/auto_sweep.$$.err | awk -v np="$np" -v c="$coll" -v l="$label" \
        '$1 != 0 { print np "," c "," $2 "," l "," $3 }' >>"$pk"
}

picks=${out%.csv}-picks.csv
echo "np,coll,algorithm,size,p50_us,launch" >"$out"
echo "np,coll,size,launch,pick" >"$picks"
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
            launch "$np" "$coll" "auto,$algs" "$min" "$top" "$factor" "$rep" "$out" "$picks"
        done
    done
done

# analyse CSV PICKS FLAGGED: prints the table; writes each flagged cell to FLAGGED as
# "np coll size alg,alg,..." (auto, its picks, each launch's fastest)
analyse() {
    python3 - "$1" "$2" "$build/ucoll_sched" "$3" <<'PY'
import collections, csv, functools, re, subprocess, sys
@functools.lru_cache(maxsize=None)
def schedule(coll, alg, np_, size):
    # every rank's steps, without the header line that names the algorithm. A plain pipeline
    # or tree gets its k from ucoll_sched's default model here, not the launch's: such a pair
    # may differ here where the launch ran one schedule (never the other way round)
    r = subprocess.run([sys.argv[3], "-c", coll, "-a", alg, "-p", str(np_), "-m", str(size),
                        "--ranks"], capture_output=True, text=True)
    return r.stdout.split("\n", 1)[1] if r.returncode == 0 else None
flagged = open(sys.argv[4], "w") if sys.argv[4] != "-" else None
picked = collections.defaultdict(dict)  # (np, coll, size) -> launch -> auto's pick
for r in csv.DictReader(open(sys.argv[2])):
    picked[(int(r["np"]), r["coll"], int(r["size"]))][r["launch"]] = r["pick"]
best = collections.OrderedDict()
launches = collections.defaultdict(dict)  # (np, coll, size) -> launch -> {alg: us}
for r in csv.DictReader(open(sys.argv[1])):
    k = (int(r["np"]), r["coll"], int(r["size"]))
    d = best.setdefault(k, {})
    t = float(r["p50_us"])
    d[r["algorithm"]] = min(t, d.get(r["algorithm"], t))
    launches[k].setdefault(r.get("launch") or "1", {})[r["algorithm"]] = t
slow = slow_min = wrong = 0
print(f"{'np':>2} {'coll':<21} {'bytes':>9} {'auto_us':>10} {'fastest':<19} {'its_us':>10}"
      f" {'auto/fastest':>12}  per launch | pick  pick/fastest per launch")
for (np_, coll, size), d in best.items():
    auto = d.pop("auto")
    name, t = min(d.items(), key=lambda x: x[1])
    ratio = auto / t
    per, pick_per, same_as = [], [], set()
    picks = picked.get((np_, coll, size), {})
    wrong_in_every = True
    to_confirm = ["auto"]  # auto, then its picks and each launch's fastest, as run by name
    for launch, algs in launches[(np_, coll, size)].items():
        others = {a: v for a, v in algs.items() if a != "auto"}
        if "auto" in algs and others:
            per.append(algs["auto"] / min(others.values()))
            to_confirm.append(min(others, key=others.get))
        # pipeline:K and tree:K run as the sweep's plain pipeline and tree (the k of the same
        # model); a node-aware pick is its first word
        pick = picks.get(launch, "").split(" ")[0]
        if pick not in algs and re.sub(r":[0-9]+$", "", pick) in algs:
            pick = re.sub(r":[0-9]+$", "", pick)
        if pick not in algs or not others:
            wrong_in_every = False
            continue
        to_confirm.append(pick)
        fastest = min(others, key=others.get)
        pick_per.append(algs[pick] / others[fastest])
        # not wrong in this launch: within 10 %, or the fastest's own schedule under another name
        if pick_per[-1] <= 1.10:
            wrong_in_every = False
        elif pick != fastest and schedule(coll, pick, np_, size) is not None and \
                schedule(coll, pick, np_, size) == schedule(coll, fastest, np_, size):
            wrong_in_every = False
            same_as.add(fastest)
    is_slow = bool(per) and min(per) > 1.10
    is_wrong = bool(pick_per) and wrong_in_every
    same = f" (the schedule of {'/'.join(sorted(same_as))})" if same_as else ""
    slow += is_slow
    slow_min += ratio > 1.10
    wrong += is_wrong
    if (is_slow or is_wrong) and flagged is not None:
        print(np_, coll, size, ",".join(dict.fromkeys(to_confirm)), file=flagged)
    flag = (" SLOW" if is_slow else "") + (" WRONG PICK" if is_wrong else "")
    names = "/".join(sorted(set(p.split(" ")[0] for p in picks.values()))) or "?"
    print(f"{np_:>2} {coll:<21} {size:>9} {auto:>10.2f} {name:<19} {t:>10.2f} {ratio:>12.2f}  "
          + " ".join(f"{x:.2f}" for x in per) + f" | {names} "
          + " ".join(f"{x:.2f}" for x in pick_per) + same + flag)
print(f"cells where auto is more than 10% slower than the fastest in every launch: {slow} of "
      f"{len(best)}")
print(f"cells above 1.10 by the smallest medians of all launches: {slow_min} of {len(best)}")
print(f"cells where auto's pick, run by name, is more than 10% slower than the fastest in every"
      f" launch (WRONG PICK): {wrong} of {len(best)}")
PY
}

flagged=/tmp/auto_sweep.$$.flagged
analyse "$out" "$picks" "$flagged"
if [ "$confirm" -gt 0 ] && [ -s "$flagged" ]; then
    ccsv=${out%.csv}-confirm.csv
    cpicks=${out%.csv}-confirm-picks.csv
    echo "np,coll,algorithm,size,p50_us,launch" >"$ccsv"
    echo "np,coll,size,launch,pick" >"$cpicks"
    while read -r np coll size algs; do
        for rep in $(seq "$confirm"); do
            launch "$np" "$coll" "$algs" "$size" "$size" 2 "$rep" "$ccsv" "$cpicks" </dev/null
        done
    done <"$flagged"
    echo
    echo "confirmation: each flagged cell again, $confirm launches of its size alone" \
        "(auto, its picks and the fastest interleaved; $ccsv)"
    analyse "$ccsv" "$cpicks" -
fi
rm -f /tmp/auto_sweep.$$ /tmp/auto_sweep.$$.err "$flagged"
