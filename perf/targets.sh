#!/usr/bin/env bash
# perf/targets.sh: a benchmark (not a test) of ucoll against UCC and Open MPI on this machine,
# the figures of the performance targets: at NP ranks (default 2 and 3), 64 KiB, 1 MiB and
# 16 MiB of allreduce, reduce, bcast, exscan and scan (float32 sum), ucoll / the fastest of
# UCC, Open MPI's defaults and Open MPI with `pml ucx`, and the 16 MiB allreduce's bandwidth
# (L / time) against memcpy's in the same run (alone and warm, after 64 MiB were written, and
# timed in the rotation).
#
# perf/ucoll_vs_ucc runs the three libraries and a plain memcpy alternating in the same
# processes; it is
# launched twice per NP, once with Open MPI's defaults and once with pml ucx, so UCC and ucoll
# are measured twice and their faster median is kept.
#
# UCC is not a Debian package. UCC_PREFIX names an install of UCC v1.3.0 (the last release
# that builds against UCX 1.13); without one, UCC_SRC names a source checkout of that tag
# (e.g. from https://github.com/openucx/ucc) that the script configures and installs under
# UCC_PREFIX, outside this tree. It is used for measurement only.
#
# Usage: perf/targets.sh [BUILD_DIR] [OUT_CSV]  (defaults . and /tmp/targets.csv)
# Environment: UCC_PREFIX (default /tmp/ucc-install), UCC_SRC, NPS (default "2 3"),
#              SIZES (default 64K,1M,16M), COLLS (default all five); UCOLL_* variables are
#              passed to every rank; MEM_ALLOC=1: ucoll's buffers from ucoll_mem_alloc, with
#              UCOLL_SINGLE_COPY_MIN=regions unless the shell sets it (see the README);
#              BARRIER=mpi: MPI_Barrier around every library's timed call, instead of each
#              library's own (ucoll_vs_ucc -B; a diagnosis, not the targets' figures);
#              TIMELINE=1: each library's barrier exits and call ends per rank (ucoll_vs_ucc -T),
#              printed after the table
set -euo pipefail

srcdir=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-.}" && pwd)
out=${2:-/tmp/targets.csv}
ucc=${UCC_PREFIX:-/tmp/ucc-install}
nps=${NPS:-"2 3"}
sizes=${SIZES:-64K,1M,16M}
colls=${COLLS:-allreduce,reduce,bcast,exscan,scan}
mem_flag=""
barrier=${BARRIER:-own}
timeline_flag=""
[ "${TIMELINE:-0}" != 0 ] && timeline_flag=-T
if [ "${MEM_ALLOC:-0}" != 0 ]; then
    mem_flag=-M
    export UCOLL_SINGLE_COPY_MIN=${UCOLL_SINGLE_COPY_MIN:-regions}
fi

if [ ! -f "$ucc/include/ucc/api/ucc.h" ]; then
    if [ -z "${UCC_SRC:-}" ] || [ ! -x "$UCC_SRC/autogen.sh" ]; then
        echo "$0: no UCC in $ucc: set UCC_PREFIX to an install of UCC v1.3.0, or UCC_SRC to" \
            "its source to build it there" >&2
        exit 2
    fi
    (cd "$UCC_SRC" && ./autogen.sh && ./configure --prefix="$ucc" --with-ucx=/usr \
        --disable-gtest && make -j"$(nproc)" && make install) >/tmp/targets-ucc-build.log 2>&1 || {
        echo "$0: building UCC failed: /tmp/targets-ucc-build.log" >&2
        exit 1
    }
fi
if [ ! -e "$build/.libs/libucoll.so" ]; then
    echo "$0: no $build/.libs/libucoll.so: build ucoll first (make)" >&2
    exit 2
fi
bin=/tmp/ucoll_vs_ucc.$$
mpicc -std=c11 -O2 -Wall -Wextra -I"$srcdir/include" -I"$ucc/include" \
    "$srcdir/perf/ucoll_vs_ucc.c" -o "$bin" -L"$build/.libs" -lucoll -L"$ucc/lib" -lucc \
    -Wl,-rpath,"$build/.libs" -Wl,-rpath,"$ucc/lib"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_oob_tcp_if_include=lo
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
ucx_mca="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
# ucoll's settings of this shell (e.g. UCOLL_SINGLE_COPY_MIN) reach every rank
fwd=""
for v in $(compgen -e | grep -E '^UCOLL_'); do
    fwd="$fwd -x $v"
done

: >"$out"
for np in $nps; do
    for setting in default pml-ucx; do
        mca=""
        [ "$setting" = pml-ucx ] && mca=$ucx_mca
        # shellcheck disable=SC2086  # $mca and $fwd are lists of words
        setsid timeout -k 5 900 mpirun -x UCX_NET_DEVICES $fwd -np "$np" $mca "$bin" -s "$sizes" \
            -c "$colls" -l "$setting" $mem_flag -B "$barrier" $timeline_flag >>"$out" || {
            echo "$0: np=$np $setting failed" >&2
            rm -f "$bin"
            exit 1
        }
    done
done
rm -f "$bin"

python3 - "$out" <<'PY'
import collections, re, sys
rows = collections.OrderedDict()
rotation = collections.defaultdict(list)  # (np, coll, bytes) -> memcpy GB/s in the rotation
memcpy = collections.defaultdict(list)  # np -> rank 0's memcpy GB/s, one per launch
cold = collections.defaultdict(list)  # np -> the same from cold caches
each = collections.defaultdict(list)  # np -> per launch, each rank's GB/s while all copy
timelines = []  # TIMELINE=1's lines, printed as they are
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("label,"):
        continue
    if line.startswith("# timeline "):
        timelines.append(line[2:])
        continue
    if line.startswith("# memcpy in the rotation "):
        m = re.match(r"# memcpy in the rotation \S* (\d+) (\S+) (\d+): [\d.]+ us \(([\d.]+) GB/s\)",
                     line)
        if not m:
            sys.exit(f"targets.sh: cannot read: {line}")
        rotation[(int(m[1]), m[2], int(m[3]))].append(float(m[4]))
        continue
    if line.startswith("# each rank's memcpy"):
        # "# each rank's memcpy B B while all N copy: rank 0 T us (X GB/s), rank 1 ..."
        w = line.replace("(", " ").split()
        np_ = int(w[w.index("all") + 1])
        each[np_].append([float(w[i + 4]) for i, x in enumerate(w) if x == "rank"])
        continue
    if line.startswith("# memcpy"):
        # "# memcpy B B: rank 0 alone T us (X GB/s), all N ranks at once T us (Y GB/s),
        # rank 0 cold T us (Z GB/s)"
        w = line.replace("(", " ").split()
        np_ = int(w[w.index("all") + 1])
        memcpy[np_].append(float(w[w.index("alone") + 3]))
        cold[np_].append(float(w[w.index("cold") + 3]))
        continue
    label, np_, coll, b, u, c, m = line.split(",")
    d = rows.setdefault((int(np_), coll, int(b)), {})
    d.setdefault("ucoll", []).append(float(u))
    if c:
        d.setdefault("UCC", []).append(float(c))
    d["Open MPI " + label] = [float(m)]
met = 0
print(f"{'np':>2} {'coll':<9} {'bytes':>9} {'ucoll_us':>10} {'fastest peer':<20} {'its_us':>10}"
      f" {'ratio':>6}")
for (np_, coll, b), d in rows.items():
    u = min(d["ucoll"])
    peers = {k: min(v) for k, v in d.items() if k != "ucoll"}
    name, t = min(peers.items(), key=lambda x: x[1])
    ok = u <= 0.9 * t
    met += ok
    print(f"{np_:>2} {coll:<9} {b:>9} {u:>10.1f} {name:<20} {t:>10.1f} {u / t:>6.2f}"
          f"{'' if ok else '  (target 0.9)'}")
print(f"cells at or under 0.9x the fastest peer: {met} of {len(rows)}")
for np_, v in memcpy.items():
    big = max(b for (n, c, b) in rows if n == np_)
    ar = rows.get((np_, "allreduce", big))
    if ar is None:
        continue
    gbs = big / min(ar["ucoll"]) * 1e-3
    print(f"np={np_}: allreduce of {big} B at {gbs:.2f} GB/s (L / time), memcpy of L on one core"
          f" {max(v):.2f} GB/s (the faster of {len(v)} launches): {100 * gbs / max(v):.0f} %")
    c = max(cold[np_])
    print(f"np={np_}: the same memcpy with 64 MiB written before each copy {c:.2f} GB/s:"
          f" {100 * gbs / c:.0f} %")
    rot = rotation.get((np_, "allreduce", big))
    if rot:
        print(f"np={np_}: the same memcpy timed in the rotation, every rank at once, from the"
              f" caches the libraries' calls leave, {max(rot):.2f} GB/s (the faster of"
              f" {len(rot)} launches): {100 * gbs / max(rot):.0f} %")
for np_, launches in each.items():
    for k, launch in enumerate(launches):
        print(f"np={np_}: launch {k + 1}, each rank's memcpy while all copy (GB/s): "
              + ", ".join(f"rank {q} {g:.2f}" for q, g in enumerate(launch))
              + f"; slowest / fastest {min(launch) / max(launch):.2f}")
for t in timelines:
    print(t)
PY
