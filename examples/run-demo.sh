#!/usr/bin/env bash
# examples/run-demo.sh: the README's first command. On a fresh Debian 12 machine it installs the
# missing packages, builds ucoll, and runs examples/record_offsets on 4 local ranks under
# mpirun: each rank computes its byte offset in one shared file with ucoll_exscan, writes its
# records there with pwrite, and rank 0 checks the whole file.
#
# Usage: examples/run-demo.sh [OUTPUT_FILE]    (default /tmp/ucoll-demo-records.txt)
# Options (first argument): --no-install, --no-build
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=tests/testlib.sh
. tests/testlib.sh

install=1 build=1
while [ $# -gt 0 ]; do
    case $1 in
    --no-install) install=0 ;;
    --no-build) build=0 ;;
    -*)
        echo "usage: $0 [--no-install] [--no-build] [OUTPUT_FILE]" >&2
        exit 2
        ;;
    *) break ;;
    esac
    shift
done
out=${1:-/tmp/ucoll-demo-records.txt}
log=$(mktemp /tmp/ucoll-demo.XXXXXX)

echo "== 1. packages"
if [ "$install" = 1 ]; then
    ucoll_need_packages
else
    echo "   skipped (--no-install)"
fi

echo "== 2. build: autogen.sh, configure, make (log: $log.build)"
if [ "$build" = 0 ]; then
    echo "   skipped (--no-build)"
elif ucoll_build "$log.build"; then
    echo "   ok"
else
    tail -n 30 "$log.build"
    echo "demo: the build failed (full log: $log.build)" >&2
    exit 1
fi

echo "== 3. examples/record_offsets on 4 ranks: mpirun -np 4 examples/record_offsets $out"
ucoll_local_env
echo "   environment: UCX_NET_DEVICES=$UCX_NET_DEVICES, OMPI_MCA_rmaps_base_oversubscribe=1," \
    "OMPI_ALLOW_RUN_AS_ROOT=1"
status=0
ucoll_launch 4 120 "$log" examples/record_offsets "$out" || status=1
sed -e '1d' -e 's/^/   /' "$log"
[ -z "$LAUNCH_NOTE" ] || echo "   ($LAUNCH_NOTE)"
if [ "$status" = 0 ]; then
    echo "== 4. the file, first and last lines ($(wc -c <"$out") bytes, $(wc -l <"$out") records):"
    head -n 3 "$out" | sed 's/^/   /'
    echo "   ..."
    tail -n 2 "$out" | sed 's/^/   /'
    echo "demo: OK"
    rm -f "$log" "$log.build"
else
    echo "demo: FAILED (log: $log)" >&2
fi

# ucoll_perf (perf/ucoll_perf.c): ucoll's exscan algorithms compared on the same 4 local ranks
if [ "$status" = 0 ] && [ -x ./ucoll_perf ] && [ -x ./ucoll_info ]; then
    algs=$(./ucoll_info -a | awk '/^[a-z]/ {c = $1} c == "exscan:" && /^  / && $1 !~ /:/ {
        print $1}' | paste -sd, -)
    perf_args=(-c exscan -a "$algs" -b 8 -e 4K -f 8 -n 200 -w 20 -v)
    echo "== 5. exscan algorithms on 4 ranks: mpirun -np 4 ucoll_perf ${perf_args[*]}"
    if ucoll_launch 4 300 "$log.perf" ./ucoll_perf "${perf_args[@]}"; then
        echo "   median latency in us (per iteration the slowest rank; 2 cores, 4 ranks: noisy)"
        awk -F, '$1 == "algorithm" {go = 1; next}
            go && NF == 9 {
                if (!($1 in row)) order[n++] = $1
                if (!($2 in col)) {col[$2] = 1; sizes[m++] = $2}
                row[$1] = row[$1] sprintf(" %9s", $5)
            }
            END {
                printf "   %-20s", "algorithm \\ bytes"
                for (i = 0; i < m; i++) printf " %9s", sizes[i]
                printf "\n"
                for (i = 0; i < n; i++) printf "   %-20s%s\n", order[i], row[order[i]]
            }' "$log.perf"
        rm -f "$log.perf"
    else
        echo "demo: the ucoll_perf step FAILED ($LAUNCH_NOTE; log: $log.perf)" >&2
        status=1
    fi
fi
exit "$status"
