#!/usr/bin/env bash
# perf/plot.sh: draws the CSV files of perf/compare.sh as PNG charts with gnuplot:
#   exscan-algs-npN.png    median latency vs message size of each ucoll exscan algorithm
#   ucoll-vs-mpi-npN.png   ratio ucoll/Open MPI of the median latencies vs size, one line per
#                          collective; one panel per Open MPI setting (default, pml ucx)
#   exscan-vs-mpi-npN.png  exscan median latency vs size: ucoll, Open MPI under each setting
#                          and exscan algorithm, and ucx_perftest tag_lat as the floor
# gnuplot comes from Debian's gnuplot-nox, installed here (as root) when it is missing.
#
# Usage: perf/plot.sh [-i IN_DIR] [-o OUT_DIR]    (both default to docs/ of the source tree)
set -euo pipefail

srcdir=$(cd "$(dirname "$0")/.." && pwd)
in="$srcdir/docs" out=""
while getopts "i:o:h" opt; do
    case $opt in
    i) in=$OPTARG ;;
    o) out=$OPTARG ;;
    h)
        sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: $0 [-i IN_DIR] [-o OUT_DIR]" >&2
        exit 2
        ;;
    esac
done
out=${out:-$in}
mkdir -p "$out"

if ! command -v gnuplot >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "plot: installing gnuplot-nox"
        { DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            gnuplot-nox || { DEBIAN_FRONTEND=noninteractive apt-get update -q &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
                gnuplot-nox; }; } </dev/null >/dev/null
    else
        echo "plot: gnuplot not found; install it: apt-get install --no-install-recommends" \
            "gnuplot-nox" >&2
        exit 1
    fi
fi
term="pngcairo size 1100,650 font ',11'"
gnuplot -e 'set terminal pngcairo' </dev/null >/dev/null 2>&1 || term="png size 1100,650"

tmp=$(mktemp -d /tmp/ucoll-plot.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# series FILE AWK_CONDITION X_COLUMN Y_COLUMN > data: "x y" lines of the rows matching
series() {
    awk -F, -v x="$3" -v y="$4" "NR > 1 && ($2) && \$y != \"\" {print \$x, \$y}" "$1"
}

# the common part of every chart
preamble() {
    cat <<EOF
set terminal $term
set datafile separator ' '
set logscale x 2
set xtics ('8' 8, '64' 64, '512' 512, '4K' 4096, '32K' 32768, '256K' 262144, \\
    '2M' 2097152, '16M' 16777216)
set xlabel 'message size per rank (bytes)'
set grid
set key outside right top
EOF
}

made=()
for csv in "$in"/exscan-algs-np*.csv; do
    [ -e "$csv" ] || continue
    n=${csv##*-np}
    n=${n%.csv}
    png="$out/exscan-algs-np$n.png"
    plots=()
    mapfile -t algs < <(awk -F, 'NR > 1 && !seen[$1]++ {print $1}' "$csv")
    for alg in "${algs[@]}"; do
        series "$csv" "\$1 == \"$alg\"" 2 5 >"$tmp/alg-$alg.dat"
        plots+=("'$tmp/alg-$alg.dat' using 1:2 with linespoints title '$alg'")
    done
    {
        preamble
        echo "set output '$png'"
        echo "set logscale y 10"
        echo "set ylabel 'latency, median over iterations of the max over ranks (us)'"
        echo "set title 'ucoll exscan algorithms, $n ranks (ucoll\\_perf -c exscan)'"
        printf 'plot '
        (
            IFS=,
            echo "${plots[*]}"
        )
    } >"$tmp/algs.gp"
    gnuplot "$tmp/algs.gp"
    made+=("$png")
done

for csv in "$in"/ucoll-vs-mpi-np*.csv; do
    [ -e "$csv" ] || continue
    n=${csv##*-np}
    n=${n%.csv}
    png="$out/ucoll-vs-mpi-np$n.png"
    {
        preamble
        echo "set output '$png'"
        echo "set multiplot layout 1,2 title 'ucoll / Open MPI median latency, $n ranks" \
            "(ucoll\\_vs\\_mpi; below 1: ucoll faster)'"
        echo "set logscale y 2"
        echo "set ylabel 'ratio ucoll / MPI'"
        echo "set key inside top right"
        for label in ompi-default ompi-ucx; do
            plots=("1 with lines dashtype 2 lc 'black' notitle")
            for coll in exscan scan reduce allreduce bcast; do
                series "$csv" "\$1 == \"$label\" && \$2 == \"$coll\"" 3 8 >"$tmp/r-$label-$coll.dat"
                [ -s "$tmp/r-$label-$coll.dat" ] || continue
                plots+=("'$tmp/r-$label-$coll.dat' using 1:2 with linespoints title '$coll'")
            done
            if [ "$label" = ompi-default ]; then
                echo "set title 'Open MPI defaults'"
            else
                echo "set title 'Open MPI --mca pml ucx (tls, devices any)'"
            fi
            printf 'plot '
            (
                IFS=,
                echo "${plots[*]}"
            )
        done
        echo "unset multiplot"
    } >"$tmp/ratio.gp"
    gnuplot "$tmp/ratio.gp"
    made+=("$png")

    png="$out/exscan-vs-mpi-np$n.png"
    series "$csv" "\$1 == \"ompi-default\" && \$2 == \"exscan\"" 3 6 >"$tmp/u.dat"
    plots=("'$tmp/u.dat' using 1:2 with linespoints lw 2 title 'ucoll (auto)'")
    mapfile -t labels < <(awk -F, 'NR > 1 && $2 == "exscan" && !seen[$1]++ {print $1}' "$csv")
    for label in "${labels[@]}"; do
        series "$csv" "\$1 == \"$label\" && \$2 == \"exscan\"" 3 7 >"$tmp/m-$label.dat"
        plots+=("'$tmp/m-$label.dat' using 1:2 with linespoints title 'MPI $label'")
    done
    if [ -f "$in/tag_lat.csv" ]; then
        series "$in/tag_lat.csv" "\$1 == \"plain\"" 2 3 >"$tmp/floor.dat"
        series "$in/tag_lat.csv" "\$1 == \"errhandling\"" 2 3 >"$tmp/floor-e.dat"
        [ ! -s "$tmp/floor.dat" ] ||
            plots+=("'$tmp/floor.dat' using 1:2 with points pt 7 ps 1.5 lc 'black'
                title 'ucx\\_perftest tag\\_lat'")
        [ ! -s "$tmp/floor-e.dat" ] ||
            plots+=("'$tmp/floor-e.dat' using 1:2 with points pt 5 ps 1.5 lc 'red'
                title 'tag\\_lat -e (peer error handling)'")
    fi
    {
        preamble
        echo "set output '$png'"
        echo "set logscale y 10"
        echo "set ylabel 'latency, median of the max over ranks (us)'"
        echo "set title 'exscan, $n ranks: ucoll vs Open MPI (settings and exscan algorithms)'"
        printf 'plot '
        (
            IFS=,
            echo "${plots[*]}" | tr '\n' ' '
            echo
        )
    } >"$tmp/exscan.gp"
    gnuplot "$tmp/exscan.gp"
    made+=("$png")
done

if [ ${#made[@]} -eq 0 ]; then
    echo "plot: no CSV of perf/compare.sh under $in" >&2
    exit 1
fi
printf 'plot: wrote %s\n' "${made[@]}"
