#!/bin/bash
# Prints the figure tables of docs/algorithms.md (Markdown) from ucoll_sched, i.e. from the
# schedules the library runs, executed symbolically: no processes, no UCX.
# Usage: perf/sched_tables.sh [PATH/TO/ucoll_sched]   (default: ./ucoll_sched)
set -euo pipefail
sched=${1:-./ucoll_sched}
[ -x "$sched" ] || {
    echo "sched_tables.sh: $sched not found (build first, or pass its path)" >&2
    exit 2
}

# field NAME of ucoll_sched's summary line for the remaining arguments
fig() {
    local name=$1
    shift
    "$sched" "$@" | sed -n "1s/.* $name=\([0-9.]*\).*/\1/p"
}
# "rounds / max_ops" of one schedule
ro() {
    local line
    line=$("$sched" "$@" | head -1)
    local r=${line##* rounds=} o=${line##* max_ops=}
    echo "${r%% *} / ${o%% *}"
}
clog2() {
    local n=$1 k=0
    while [ $((1 << k)) -lt "$n" ]; do k=$((k + 1)); done
    echo "$k"
}
pow2_floor() {
    local n=1
    while [ $((n * 2)) -le "$1" ]; do n=$((n * 2)); done
    echo "$n"
}
# smallest q' whose doubling schedule has ceil(log2 p) rounds
best_qprime() {
    local p=$1 q
    q=$(clog2 "$p")
    for qp in $(seq 1 62); do
        if [ "$(fig rounds -c exscan -a "doubling:$qp" -p "$p")" -le "$q" ]; then
            echo "$qp"
            return
        fi
    done
}
# a/b in lowest terms
frac() {
    local a=$1 b=$2 x y t
    x=$a y=$b
    while [ "$y" -ne 0 ]; do t=$((x % y)) x=$y y=$t; done
    if [ $((b / x)) -eq 1 ]; then echo "$((a / x))"; else echo "$((a / x))/$((b / x))"; fi
}

echo "### Exclusive scan: rounds / max ⊕ per process"
echo
echo "| p | q | recursive-doubling | 1-doubling | 123-doubling | best q′ | best-doubling | two-op-doubling | roughly-halving |"
echo "|---|---|---|---|---|---|---|---|---|"
for p in $(seq 2 36); do
    echo "| $p | $(clog2 "$p") | $(ro -c exscan -a recursive-doubling -p "$p") |" \
        "$(ro -c exscan -a 1-doubling -p "$p") | $(ro -c exscan -a 123-doubling -p "$p") |" \
        "$(best_qprime "$p") | $(ro -c exscan -a best-doubling -p "$p") |" \
        "$(ro -c exscan -a two-op-doubling -p "$p") | $(ro -c exscan -a roughly-halving -p "$p") |"
done
echo
echo "### Exclusive scan at larger p: rounds / max ⊕ per process"
echo
echo "| p | q | recursive-doubling | 1-doubling | 123-doubling | best q′ | best-doubling | two-op-doubling | roughly-halving |"
echo "|---|---|---|---|---|---|---|---|---|"
for p in 64 65 100 127 128 129 1000 1024 1025 1140 1152 4095 4096 100000; do
    echo "| $p | $(clog2 "$p") | $(ro -c exscan -a recursive-doubling -p "$p") |" \
        "$(ro -c exscan -a 1-doubling -p "$p") | $(ro -c exscan -a 123-doubling -p "$p") |" \
        "$(best_qprime "$p") | $(ro -c exscan -a best-doubling -p "$p") |" \
        "$(ro -c exscan -a two-op-doubling -p "$p") | $(ro -c exscan -a roughly-halving -p "$p") |"
done
echo
echo "### Inclusive scan, reduce, allreduce (small vectors), bcast, barrier: rounds / max ⊕"
echo
echo "| p | scan linear | scan doubling | scan recursive-doubling | reduce binomial | reduce binomial, non-commutative, root 1 | allreduce recursive-doubling | bcast binomial | barrier dissemination |"
echo "|---|---|---|---|---|---|---|---|---|"
for p in 2 3 4 5 6 7 8 9 16 17 33 100 1000 1024 1025; do
    echo "| $p | $(ro -c scan -a linear -p "$p") | $(ro -c scan -a doubling -p "$p") |" \
        "$(ro -c scan -a recursive-doubling -p "$p") | $(ro -c reduce -a binomial -p "$p") |" \
        "$(ro -c reduce -a binomial -p "$p" -r 1 --noncommutative) |" \
        "$(ro -c allreduce -a recursive-doubling -p "$p") |" \
        "$(ro -c bcast -a binomial -p "$p") | $(ro -c barrier -a dissemination -p "$p") |"
done
echo
echo "### rhrd and rhrd-classic: rounds / volume (in units of L, the vector's bytes)"
echo
echo "L = 2N · 64 bytes, so that every split is even; root 0."
echo
echo "| P | N | allreduce rhrd | allreduce rhrd-classic | reduce rhrd | reduce rhrd-classic |"
echo "|---|---|---|---|---|---|"
for p in 2 3 4 5 6 7 8 9 12 15 16 17 24 31 32 33 63 64 65 1000 1024 1025; do
    n=$(pow2_floor "$p")
    L=$((2 * n * 64))
    row="| $p | $n |"
    for ca in allreduce:rhrd allreduce:rhrd-classic reduce:rhrd reduce:rhrd-classic; do
        c=${ca%%:*} a=${ca#*:}
        r=$(fig rounds -c "$c" -a "$a" -p "$p" -m "$L")
        v=$(fig volume -c "$c" -a "$a" -p "$p" -m "$L")
        row="$row $r / $(frac "$v" "$L") L |"
    done
    echo "$row"
done
