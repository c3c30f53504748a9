#!/usr/bin/env bash
# tests/run-tests.sh: ucoll's whole test suite, the README's test command (.ci/run calls it).
# On a fresh Debian 12 machine it installs the missing packages, builds the tree
# (autogen, configure --enable-werror, make), runs make check (the Check unit tests, the
# exported-symbols test and, with mpirun, a few short launches of its own), runs
# tests/mp/mp_test without a launcher and under mpirun at np = 2, 3, 4, 5, 7, 8, 16 (plus runs
# over UCX_TLS=tcp,self, with UCX_RNDV_THRESH=0, UCOLL_SHM=0 and two UCOLL_SEGMENT_SIZE values),
# checks per rank that the on-host channel is used exactly when it should be, runs mp_test with
# single copy on one host (and with a rank whose seccomp filter forbids it), runs
# tests/mp/block_test (the block collectives) at np = 1..9, 16 and 17, runs the store bootstrap's
# tests (mp_test at np 8 started by a shell loop, no launcher) and a build configured
# --without-pmix, runs the demo and the Python bindings' tests (python/tests, pytest), and
# finally installs ucoll into a staging directory and builds tests/api_user/api_user.c against
# it with `pkg-config ucoll`, running it at np = 1..8.
#
# Every launch runs under `timeout -k 5` in its own process group and counts as one test; each
# Check test counts as one test. The last line is "N passed, N failed"; the exit status is
# non-zero if anything failed. Logs are kept in a directory under /tmp (printed at the end).
#
# Options: --no-install (do not check/install packages)  --no-build (use the existing build)
#          --quick (np 1-4 and counts up to 1000 only, for development)
#          --no-slurm (leave out the private Slurm cluster, e.g. where another one may run)
#          --no-cluster (leave out the cluster of namespace hosts, tests/cluster)
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/testlib.sh
. tests/testlib.sh

install=1 build=1 quick=0 slurm=1 cluster=1
for arg in "$@"; do
    case $arg in
    --no-install) install=0 ;;
    --no-build) build=0 ;;
    --quick) quick=1 ;;
    --no-slurm) slurm=0 ;;
    --no-cluster) cluster=0 ;;
    -h | --help)
        sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "run-tests.sh: unknown option $arg (try --help)" >&2
        exit 2
        ;;
    esac
done

LOGDIR=$(mktemp -d /tmp/ucoll-tests.XXXXXX)
PASSED=0
FAILED=0
MP_P=0 MP_F=0 MP_S=0
T_START=$SECONDS

pass() {
    PASSED=$((PASSED + 1))
    echo "PASS  $*"
}

# fail NAME [LOG]: counts a failure and shows why (the FAIL lines and the tail of the log)
fail() {
    FAILED=$((FAILED + 1))
    echo "FAIL  $1"
    if [ -n "${2:-}" ] && [ -f "$2" ]; then
        if grep -q -E '^(FAIL|FATAL)' "$2"; then
            echo "      ---- first failure messages ($2):"
            grep -E '^(FAIL|FATAL)' "$2" | head -n 12 | sed 's/^/      | /'
        fi
        echo "      ---- last lines of $2:"
        tail -n 25 "$2" | sed 's/^/      | /'
    fi
}

finish() {
    section_end
    echo
    if [ $((MP_P + MP_F + MP_S)) -gt 0 ]; then
        echo "mp_test cases over all launches and ranks: $MP_P passed, $MP_F failed," \
            "$MP_S skipped (each launch above counts as one test)"
    fi
    echo "logs: $LOGDIR   time: $((SECONDS - T_START)) s"
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit
}

# section TITLE: a new section; the one before ends with its time (section_end), so that a log
# shows where the run's time went
SECTION_T0=""
section_end() {
    [ -z "$SECTION_T0" ] || echo "      (section: $((SECONDS - SECTION_T0)) s)"
}
section() {
    section_end
    SECTION_T0=$SECONDS
    echo
    echo "== $*"
}

# ---------------------------------------------------------------- packages and build
section "packages"
if [ "$install" = 1 ]; then
    if ucoll_need_packages >"$LOGDIR/packages.log" 2>&1; then
        tail -n 1 "$LOGDIR/packages.log"
    else
        fail "installing the Debian packages" "$LOGDIR/packages.log"
        finish
    fi
else
    echo "skipped (--no-install)"
fi

section "build"
if [ "$build" = 1 ]; then
    if ucoll_build "$LOGDIR/build.log"; then
        pass "build: autogen.sh, configure --enable-werror, make"
    else
        fail "build: autogen.sh, configure --enable-werror, make" "$LOGDIR/build.log"
        finish
    fi
else
    echo "skipped (--no-build)"
fi

# ---------------------------------------------------------------- Check unit tests
section "unit tests (Check, make check)"
# results of an earlier configuration (e.g. one without Check) must not be read as this one's
rm -f tests/unit/*.log tests/unit/*.trs tests/check-exports.log tests/check-exports.trs \
    tests/mp/check/*.log tests/mp/check/*.trs
make -j2 check >"$LOGDIR/check.log" 2>&1
check_rc=$?
n_logs=0
for f in tests/unit/*.log; do
    [ -f "$f" ] || continue
    cp "$f" "$LOGDIR/unit-$(basename "$f")"
    # Check prints "NN%: Checks: N, Failures: F, Errors: E" per suite run
    read -r c fl er < <(grep -o -E 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$f" |
        awk -F'[:,] *' '{c += $2; f += $4; e += $6} END {print c + 0, f + 0, e + 0}')
    [ "$c" -gt 0 ] || continue
    n_logs=$((n_logs + 1))
    PASSED=$((PASSED + c - fl - er))
    echo "      $(basename "$f" .log): $c checks, $fl failures, $er errors"
    if [ $((fl + er)) -gt 0 ]; then
        FAILED=$((FAILED + fl + er))
        echo "FAIL  $(basename "$f" .log): $((fl + er)) Check test(s) failed:"
        grep -E ':[EF]:' "$f" | head -n 12 | sed 's/^/      | /'
    fi
done
# make check's other tests (the exported symbols; with a launcher, a few short launches of its
# own, besides the ones below) count one each; unit tests skipped for want of Check are a
# failure here, never a pass
for f in tests/unit/skipped.trs tests/*.trs tests/mp/check/*.trs; do
    [ -f "$f" ] || continue
    t=${f%.trs}
    res=$(sed -n 's/^:test-result: //p' "$f" | head -n 1)
    cp "$t.log" "$LOGDIR/check-$(basename "$t").log" 2>/dev/null
    case "$t:$res" in
    tests/unit/skipped:*)
        fail "make check: the unit tests were skipped (configure found no Check)" "$t.log"
        ;;
    *:PASS) pass "make check: $t" ;;
    *:SKIP) echo "SKIP  make check: $t (not counted)" ;;
    *) fail "make check: $t: ${res:-no result}" "$t.log" ;;
    esac
done
if [ "$check_rc" != 0 ]; then
    fail "make check exited with status $check_rc" "$LOGDIR/check.log"
elif [ "$n_logs" = 0 ] && [ ! -f tests/unit/skipped.trs ]; then
    fail "make check: no Check results found" "$LOGDIR/check.log"
fi

# ---------------------------------------------------------------- multi-process tests
ucoll_local_env
export UCOLL_TIMEOUT="${UCOLL_TIMEOUT:-120}" # a hung collective becomes an error, not a hang

# job_log NAME: the log file of the launch run_job NAME made
job_log() {
    echo "$LOGDIR/$(echo "$1" | tr -c 'A-Za-z0-9=.,_-' '_').log"
}

# run_job NAME NP SECONDS "VAR=VALUE ..." PROGRAM [ARGS...]: one launch = one test
run_job() {
    local name=$1 np=$2 secs=$3 envs=$4
    shift 4
    local log rc note p f s t0=$SECONDS
    log="$(job_log "$name")"
    note=$(
        for kv in $envs; do export "${kv?}"; done
        ucoll_launch "$np" "$secs" "$log" "$@"
        rc=$?
        echo "$LAUNCH_NOTE"
        exit "$rc"
    )
    rc=$?
    local summary counts
    summary=$(grep -E '^(mp_test|api_user) np=|verdict:' "$log" | tail -n 1)
    # mp_test's own figures, for the total at the end
    counts=$(echo "$summary" | sed -n -E \
        's/.* rank-checks: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/p')
    if [ -n "$counts" ]; then
        read -r p f s <<<"$counts"
        MP_P=$((MP_P + p)) MP_F=$((MP_F + f)) MP_S=$((MP_S + s))
    fi
    if [ "$rc" = 0 ]; then
        pass "$name ($((SECONDS - t0)) s)${summary:+: $summary}"
        [ -z "$note" ] || echo "      $note"
    else
        fail "$name ($((SECONDS - t0)) s): $note" "$log"
    fi
}

# Every algorithm of this build, as `ucoll_info -a` lists them ("doubling:Q" run as doubling:3,
# "pipeline[:K]" as pipeline and pipeline:8);
# mp_test and api_user fall back to their built-in lists without ucoll_info. They test the first
# six collectives (ALG_LISTS), block_test the block collectives (BLOCK_ALGS), stress_test all
# of them.
ALG_LISTS=()
BLOCK_ALGS=()
if [ -x ./ucoll_info ]; then
    while read -r coll list; do
        case $coll in
        exscan | scan | reduce | allreduce | bcast | barrier) ALG_LISTS+=("$coll=$list") ;;
        *) BLOCK_ALGS+=(--alg-list "$coll=$list") ;;
        esac
    done < <(./ucoll_info -a | awk '
        /^[a-z_]+:$/ { if (c != "") print c, l; c = substr($0, 1, length($0) - 1); l = ""; next }
        /^  [^ ]/ { n = $1; sub(/:Q$/, ":3", n); if (sub(/\[:K\]$/, "", n)) n = n "," n ":8"
                    l = l (l == "" ? "" : ",") n }
        END { if (c != "") print c, l }')
fi
MP_ALGS=()
for a in "${ALG_LISTS[@]}"; do
    MP_ALGS+=(--alg-list "$a")
done
section "algorithms under test"
if [ "${#ALG_LISTS[@]}" -gt 0 ]; then
    printf '      %s\n' "${ALG_LISTS[@]}"
    printf '      %s\n' "${BLOCK_ALGS[@]}" | grep -v '^ *--alg-list$'
else
    echo "      no ./ucoll_info: the built-in lists of mp_test and api_user"
fi

# mp NAME NP SECONDS "VAR=VALUE ..." [MP_TEST_OPTIONS]: one mp_test launch; the job size is
# asserted by mp_test itself (--expect-size)
mp() {
    local name=$1 np=$2 secs=$3 envs=$4 size=$2
    shift 4
    [ "$np" != none ] || size=1
    run_job "$name" "$np" "$secs" "$envs" \
        tests/mp/mp_test "${MP_ALGS[@]}" --expect-size "$size" "$@"
}

if [ "$quick" = 1 ]; then
    section "multi-process tests (quick)"
    mp "mp_test np=1 (no launcher)" none 300 "" --counts 0,1,7,1000
    for np in 2 3 4; do
        mp "mp_test np=$np" "$np" 300 "" --counts 0,1,7,1000
    done
else
    section "multi-process tests"
    # every case up to np = 8; beyond that, and in the runs that vary the transport, 100000
    # elements (most of the time on a small machine) only for three dtype-op pairs
    BIG=(--big-combos "int32-sum,float64-sum,uint64-user-affine")
    mp "mp_test np=1 (no launcher)" none 300 ""
    for np in 2 3 4 5 7 8; do
        mp "mp_test np=$np" "$np" 900 ""
    done
    mp "mp_test np=16" 16 900 "" "${BIG[@]}"
    # transports and protocols: TCP only; every message by rendezvous
    mp "mp_test np=4 UCX_TLS=tcp,self" 4 600 "UCX_TLS=tcp,self" "${BIG[@]}"
    mp "mp_test np=5 UCX_RNDV_THRESH=0" 5 600 "UCX_RNDV_THRESH=0" "${BIG[@]}"
    # a job spanning hosts, simulated (UCOLL_TEST_HOSTS=N: rank r acts as on host r % N): the
    # HOST and NET UCP contexts side by side; every NET message by rendezvous once
    mp "mp_test np=4 as 2 hosts" 4 600 "UCOLL_TEST_HOSTS=2" "${BIG[@]}"
    mp "mp_test np=7 as 3 hosts UCX_RNDV_THRESH=0" 7 900 \
        "UCOLL_TEST_HOSTS=3 UCX_RNDV_THRESH=0" "${BIG[@]}"
    # the node-aware forms: on the round robin above those that need no rank order; on world
    # ordered host by host (--host-order) exscan, scan and the non-commutative op's too, over
    # an uneven layout (3 + 3 + 2)
    mp "mp_test np=8 as 3 hosts, ranks host by host" 8 900 "UCOLL_TEST_HOSTS=3" \
        --host-order 3 "${BIG[@]}"
    # small on-host messages through UCX instead of ucoll's shared-memory rings
    mp "mp_test np=5 UCOLL_SHM=0" 5 600 "UCOLL_SHM=0" "${BIG[@]}"
    # UCX peer error handling on every endpoint (TCP on one host)
    mp "mp_test np=3 UCOLL_FAILURE_DETECTION=ucx" 3 600 "UCOLL_FAILURE_DETECTION=ucx" "${BIG[@]}"
    # message segmentation: none at all; small segments that are no multiple of 8 bytes
    mp "mp_test np=3 UCOLL_SEGMENT_SIZE=0" 3 600 "UCOLL_SEGMENT_SIZE=0" "${BIG[@]}"
    mp "mp_test np=6 UCOLL_SEGMENT_SIZE=1000" 6 600 "UCOLL_SEGMENT_SIZE=1000" \
        --counts 0,1,7,1000,20000 "${BIG[@]}"
fi

# shm_used NAME NP "VAR=VALUE ..." WANT: an mp_test launch whose ranks report at finalize
# how many messages went through the on-host channel (UCOLL_TEST_SHM_COUNTS); WANT "some":
# every rank sent and received some, "none": every rank none. One more test on top of the launch.
shm_used() {
    local name=$1 np=$2 envs=$3 want=$4
    mp "$name" "$np" 300 "UCOLL_TEST_SHM_COUNTS=1 $envs" --colls allreduce,exscan --counts 1,7
    shm_counts_check "$name" "$np" "$want"
}
# shm_counts_check NAME NP WANT [LOG]: the check of shm_used on the log of run_job NAME (or LOG)
shm_counts_check() {
    local name=$1 np=$2 want=$3 log=${4:-} lines bad
    [ -n "$log" ] || log="$(job_log "$name")"
    local reports
    reports=$(ucoll_shm_reports "$log")
    lines=$(printf '%s' "$reports" | grep -c .)
    if [ "$want" = some ]; then
        bad=$(printf '%s' "$reports" | awk '$2 == 0 || $3 == 0' | grep -c .)
    else
        bad=$(printf '%s' "$reports" | awk '$2 != 0 || $3 != 0' | grep -c .)
    fi
    local what="every rank sent and received some messages through the on-host channel"
    [ "$want" = some ] || what="no rank used the on-host channel"
    if [ "$lines" = "$np" ] && [ "$bad" = 0 ]; then
        pass "$name: $what ($lines ranks reported)"
    else
        fail "$name: $lines of $np ranks reported, $bad of them wrong; expected: $what" "$log"
    fi
}
section "on-host shared-memory channel"
# the check itself, on a log as mpirun merges the ranks' output: in pieces that need not end at
# a line's end, so that one rank's report may follow another rank's unfinished stdout line
printf '%s\n' \
    '[1796119065.207057] [vm:7629 :0] mpool.c:53 UCX WARN object 0x7fac505ff898 was not' \
    'returned to mpool mm_ucoll: rank 2 shm sent 147 received 164 unexpected 81' \
    'recv_desc' 'ucoll: rank 0 shm sent 181 received 146 unexpected 61' \
    'ucoll: rank 1 shm sent 161 received 164 unexpected 82' >"$LOGDIR/shm-report-merged.log"
shm_counts_check "shm counts check, a report after an unfinished line" 3 some \
    "$LOGDIR/shm-report-merged.log"
shm_used "shm counts np=3" 3 "" some
shm_used "shm counts np=4 as 2 hosts" 4 "UCOLL_TEST_HOSTS=2" some
shm_used "shm counts np=3 UCOLL_SHM=0" 3 "UCOLL_SHM=0" none
shm_used "shm counts np=3 as 3 hosts" 3 "UCOLL_TEST_HOSTS=3" none
shm_used "shm counts np=2 UCOLL_FAILURE_DETECTION=ucx" 2 "UCOLL_FAILURE_DETECTION=ucx" none

# UCX's shared-memory segment size (transport.c, HOST_MM_SEG_SIZE): the on-host context asks for
# 20544 B, and UCX (its debug log) applies that to the posix and the sysv interface of each rank
# (this UCX has no xpmem), unless the user set a segment size of that family or UCX_TLS leaves
# both out; never a key that no interface takes (UCX's "invalid configuration" warning)
# mm_seg_applied NAME NP "VAR=VALUE ..." WANT: UCX applied the size WANT times in all. The
# ranks run without the caller's UCX_TLS, segment sizes and log file, but for those in VARS.
# Each rank's UCX log goes to a file of its own (UCX_LOG_FILE, %p its pid): the launcher's merge
# of the ranks' output can cut one rank's line into another's (once, under load, it took the
# start of an "apply" line).
mm_seg_applied() {
    local name=$1 np=$2 envs=$3 want=$4 log applied warned v ucxdir
    local -a unset_args=()
    for v in UCX_TLS UCX_MM_SEG_SIZE UCX_POSIX_SEG_SIZE UCX_SYSV_SEG_SIZE UCX_XPMEM_SEG_SIZE \
        UCX_LOG_FILE; do
        case " $envs " in *" $v="*) ;; *) unset_args+=(-u "$v") ;; esac
    done
    log="$(job_log "$name")"
    ucxdir="${log%.log}.ucx"
    rm -rf "$ucxdir" && mkdir -p "$ucxdir"
    run_job "$name" "$np" 300 "UCX_LOG_LEVEL=debug $envs" env "${unset_args[@]}" \
        UCX_LOG_FILE="$ucxdir/%p.log" tests/mp/mp_test "${MP_ALGS[@]}" --expect-size "$np" \
        --colls allreduce,bcast --counts 7,5000
    applied=$(cat "$ucxdir"/*.log 2>/dev/null | grep -o 'apply UCT configuration MM_SEG_SIZE=20544' |
        grep -c .)
    warned=$(cat "$log" "$ucxdir"/*.log 2>/dev/null | grep -o 'invalid configuration' | grep -c .)
    if [ "$applied" = "$want" ] && [ "$warned" = 0 ]; then
        pass "$name: UCX applied the segment size $applied times, warned of no key"
    else
        fail "$name: UCX applied the segment size $applied times (want $want), warned $warned" \
            "$log"
    fi
}
mm_seg_applied "mm segment size np=2" 2 "" 4
mm_seg_applied "mm segment size np=2 UCX_TLS=^sysv" 2 "UCX_TLS=^sysv" 2
mm_seg_applied "mm segment size np=2 UCX_TLS=\\posix,\\self" 2 "UCX_TLS=\\posix,\\self" 2
mm_seg_applied "mm segment size np=2 UCX_SYSV_SEG_SIZE=8256" 2 "UCX_SYSV_SEG_SIZE=8256" 0
mm_seg_applied "mm segment size np=2 UCX_MM_SEG_SIZE=8256" 2 "UCX_MM_SEG_SIZE=8256" 0
mm_seg_applied "mm segment size np=2 UCX_TLS=tcp,self" 2 "UCX_TLS=tcp,self" 0
mm_seg_applied "mm segment size np=2 UCX_TLS=^sm" 2 "UCX_TLS=^sm" 0
mm_seg_applied "mm segment size np=2 UCX_TLS=^\\posix,\\sysv" 2 "UCX_TLS=^\\posix,\\sysv" 0

# single copy (UCOLL_SINGLE_COPY_MIN): on-host messages of that size go as descriptors through the
# rings and the receiver reads the sender's buffer (process_vm_readv). mp_test with every message
# over 4 KiB so, segmented and not; every rank must report single-copy reads. Then a rank whose
# seccomp filter refuses process_vm_readv (tests/mp/no_cma): init turns single copy off on every
# rank, rank 1 alone says why, once, and every rank reports no single copy at all.
section "single copy on one host"
# shm_field_check NAME NP WANT REGEX VALUE WHAT: each of the NP ranks of launch NAME printed
# a UCOLL_TEST_SHM_COUNTS line, matched up to its end by REGEX, on which the awk expression
# VALUE is non-zero (WANT "some") or zero (WANT "none"); WHAT says what VALUE counts
shm_field_check() {
    local name=$1 np=$2 want=$3 regex=$4 value=$5 what=$6 log reports lines bad
    log="$(job_log "$name")"
    reports=$(grep -oE "$regex" "$log" | awk "{ print \$3, ($value) != 0 }" | sort -u)
    lines=$(printf '%s' "$reports" | grep -c .)
    if [ "$want" = some ]; then
        bad=$(printf '%s' "$reports" | awk '$2 == 0' | grep -c .)
    else
        bad=$(printf '%s' "$reports" | awk '$2 != 0' | grep -c .)
    fi
    if [ "$lines" = "$np" ] && [ "$bad" = 0 ]; then
        pass "$name: $what on every rank: $want"
    else
        fail "$name: $lines of $np ranks reported, $bad of them not '$want' $what" "$log"
    fi
}
# sc_reads_check NAME NP WANT: WANT "some": each of NP ranks reported copies_read > 0 in its
# UCOLL_TEST_SHM_COUNTS line; "none": each reported 0 copies sent and read
sc_reads_check() {
    # shellcheck disable=SC2016  # awk's fields, not the shell's
    local value='$14'
    # shellcheck disable=SC2016
    [ "$3" = some ] || value='$12 + $14'
    shm_field_check "$1" "$2" "$3" \
        'ucoll: rank [0-9]+ shm sent [0-9]+ received [0-9]+ unexpected [0-9]+ copies_sent [0-9]+ copies_read [0-9]+' \
        "$value" "single-copy reads"
}
SC_COMBOS=(--big-combos "int32-sum,float64-sum,uint64-user-affine")
mp "mp_test np=3 UCOLL_SINGLE_COPY_MIN=4097" 3 600 \
    "UCOLL_SINGLE_COPY_MIN=4097 UCOLL_TEST_SHM_COUNTS=1" "${SC_COMBOS[@]}"
sc_reads_check "mp_test np=3 UCOLL_SINGLE_COPY_MIN=4097" 3 some
mp "mp_test np=5 UCOLL_SINGLE_COPY_MIN=4097 UCOLL_SEGMENT_SIZE=0" 5 600 \
    "UCOLL_SINGLE_COPY_MIN=4097 UCOLL_SEGMENT_SIZE=0 UCOLL_TEST_SHM_COUNTS=1" "${SC_COMBOS[@]}"
sc_reads_check "mp_test np=5 UCOLL_SINGLE_COPY_MIN=4097 UCOLL_SEGMENT_SIZE=0" 5 some
# all 16 collectives (blocking, nonblocking, persistent, the v forms) in a random mix, the
# block collectives alone, and 4 threads per rank, with single copy
sc_ops=5000
[ "$quick" = 0 ] || sc_ops=500
run_job "stress np=5 UCOLL_SINGLE_COPY_MIN=4097: $sc_ops calls" 5 900 \
    "UCOLL_SINGLE_COPY_MIN=4097 UCOLL_TEST_SHM_COUNTS=1" tests/mp/stress_test --expect-size 5 \
    --ops "$sc_ops" --warmup-ops 1000 "${MP_ALGS[@]}" "${BLOCK_ALGS[@]}"
sc_reads_check "stress np=5 UCOLL_SINGLE_COPY_MIN=4097: $sc_ops calls" 5 some
run_job "block_test np=5 UCOLL_SINGLE_COPY_MIN=4097" 5 600 \
    "UCOLL_SINGLE_COPY_MIN=4097 UCOLL_TEST_SHM_COUNTS=1" tests/mp/block_test "${BLOCK_ALGS[@]}" \
    --expect-size 5
sc_reads_check "block_test np=5 UCOLL_SINGLE_COPY_MIN=4097" 5 some
# (8 KiB vectors: its default 3 elements stay in the rings, and the counts leave init's own
# single-copy reads out)
run_job "thread_test np=2 UCOLL_SINGLE_COPY_MIN=4097" 2 120 \
    "UCOLL_SINGLE_COPY_MIN=4097 UCOLL_TEST_SHM_COUNTS=1 UCOLL_PRINT_COST=1" tests/mp/thread_test \
    --expect-size 2 --vlen 1024
sc_reads_check "thread_test np=2 UCOLL_SINGLE_COPY_MIN=4097" 2 some
# buffers from ucoll_mem_alloc: every algorithm of the six collectives, results checked, with
# the large messages read through mappings of the senders' regions (copied from them, or
# reduced straight out of them: "lent") and written into receivers' offered buffers.
# sc_pair_check NAME NP A B WHAT: each of the NP ranks of launch NAME reported non-zero
# UCOLL_TEST_SHM_COUNTS fields A and B (adjacent on its line); WHAT says what that shows
sc_pair_check() {
    # shellcheck disable=SC2016  # awk's fields, not the shell's
    shm_field_check "$1" "$2" some "ucoll: rank [0-9]+ shm .* $3 [0-9]+ $4 [0-9]+" \
        '$(NF - 2) != 0 && $NF != 0' "$3 and $4 ($5)"
}
sc_mapped_check() {
    sc_pair_check "$1" "$2" copies_mapped copies_lent \
        "copied from and reduced out of peers' regions"
}
sc_written_check() {
    sc_pair_check "$1" "$2" copies_written writes_taken \
        "wrote into a peer's offered buffer and took such writes"
}
for np in 2 3 4; do
    mp "mp_test np=$np --mem UCOLL_SINGLE_COPY_MIN=4097" "$np" 600 \
        "UCOLL_SINGLE_COPY_MIN=4097 UCOLL_TEST_SHM_COUNTS=1" --mem "${SC_COMBOS[@]}"
    sc_mapped_check "mp_test np=$np --mem UCOLL_SINGLE_COPY_MIN=4097" "$np"
    sc_written_check "mp_test np=$np --mem UCOLL_SINGLE_COPY_MIN=4097" "$np"
done
# the block collectives too (reduce-scatter's received blocks are (+)ed where they lie)
run_job "block_test np=5 --mem UCOLL_SINGLE_COPY_MIN=4097" 5 600 \
    "UCOLL_SINGLE_COPY_MIN=4097 UCOLL_TEST_SHM_COUNTS=1" tests/mp/block_test "${BLOCK_ALGS[@]}" \
    --expect-size 5 --mem
sc_mapped_check "block_test np=5 --mem UCOLL_SINGLE_COPY_MIN=4097" 5
# exact counts: a 2-rank rhrd allreduce of 1 MiB is one exchange whose received half is (+)ed
# into the result (lent: read in place) and one whose half is the result. That half is written
# into the peer's result by the (+) itself, which the peer offered when it posted the first
# exchange: per rank and iteration one offer sent, one half written, one taken, none copied
# (mapped). 3 iterations, no warm-up. From malloc's buffers: none of these.
for mem in -M ""; do
    name="ucoll_perf np=2 rhrd allreduce 1 MiB x 3${mem:+ from ucoll_mem_alloc}"
    run_job "$name" 2 120 "UCOLL_SINGLE_COPY_MIN=65536 UCOLL_TEST_SHM_COUNTS=1" ./ucoll_perf \
        -c allreduce -a rhrd -d int32 -b 1M -e 1M -n 3 -w 0 $mem
    log="$(job_log "$name")"
    got=$(grep -oE 'ucoll: rank [0-9]+ shm .* writes_taken [0-9]+' "$log" |
        awk '{ print $3, $(NF - 8), $(NF - 6), $(NF - 4), $(NF - 2), $NF }' | sort |
        tr '\n' ' ')
    want="0 0 3 3 3 3 1 0 3 3 3 3 "
    [ -n "$mem" ] || want="0 0 0 0 0 0 1 0 0 0 0 0 "
    if [ "$got" = "$want" ]; then
        pass "$name: rank, mapped, lent, offered, written, taken: $got"
    else
        fail "$name: rank, mapped, lent, offered, written, taken: '$got' (want '$want')" "$log"
    fi
done
# exact counts under regions, the receives auto's model prices as lent (copied_path): a 3-rank
# exscan of 1 MiB x 3 by roughly-halving is rank 1's copy of rank 0's input, rank 2's copy of
# rank 1's, and rank 2's second message, read in place by its (+) (lent); pipeline:2 lends
# nothing (every segment lands in OUT, which the (+) only reads): ranks 1 and 2 copy 2
# segments per call, and rank 1 offers its second (rank 0 sends its input, so no write takes
# it). Per rank: mapped, lent, offered, written, taken.
for alg in roughly-halving pipeline:2; do
    name="ucoll_perf np=3 regions: $alg exscan 1 MiB x 3, lent receives"
    run_job "$name" 3 120 "UCOLL_SINGLE_COPY_MIN=regions UCOLL_TEST_SHM_COUNTS=1" ./ucoll_perf \
        -M -c exscan -a "$alg" -d int32 -b 1M -e 1M -n 3 -w 0
    log="$(job_log "$name")"
    got=$(grep -oE 'ucoll: rank [0-9]+ shm .* writes_taken [0-9]+' "$log" |
        awk '{ print $3, $(NF - 8), $(NF - 6), $(NF - 4), $(NF - 2), $NF }' | sort |
        tr '\n' ' ')
    want="0 0 0 0 0 0 1 3 0 0 0 0 2 3 3 0 0 0 "
    [ "$alg" = roughly-halving ] || want="0 0 0 0 0 0 1 6 0 3 0 0 2 6 0 0 0 0 "
    if [ "$got" = "$want" ]; then
        pass "$name: rank, mapped, lent, offered, written, taken: $got"
    else
        fail "$name: rank, mapped, lent, offered, written, taken: '$got' (want '$want')" "$log"
    fi
done
# UCOLL_SINGLE_COPY_MIN=regions: messages of 8 KiB and up of every algorithm go by single copy
# (from the senders' regions: reads through mappings, counted as copies_mapped and copies_lent)
# where no host has more ranks than CPUs, from 128 KiB where one has; 4 KiB stays in the rings.
# sc_regions NAME NP WANT COLL ALG COUNT: mp_test --mem of one int32 COLL by ALG; WANT "some":
# every rank read a peer's region, "none": no rank did (init's own messages come from scratch)
sc_regions() {
    local name=$1 np=$2 want=$3 coll=$4 alg=$5 count=$6
    run_job "$name" "$np" 300 "UCOLL_SINGLE_COPY_MIN=regions UCOLL_TEST_SHM_COUNTS=1" \
        tests/mp/mp_test --expect-size "$np" --colls "$coll" --alg-list "$coll=$alg" \
        --combos int32-sum --counts "$count" --mem
    # shellcheck disable=SC2016  # awk's fields, not the shell's
    shm_field_check "$name" "$np" "$want" \
        'ucoll: rank [0-9]+ shm .* copies_mapped [0-9]+ copies_lent [0-9]+' \
        '$(NF - 2) + $NF' "reads of peers' regions"
}
cpus=$(nproc)
want=none
[ "$cpus" -lt 2 ] || want=some
sc_regions "mp_test np=2 regions: 4 KiB binomial reduce" 2 none reduce binomial 1024
sc_regions "mp_test np=2 regions: 8 KiB binomial reduce" 2 "$want" reduce binomial 2048
sc_regions "mp_test np=2 regions: 16 KiB recursive-doubling allreduce" 2 "$want" allreduce \
    recursive-doubling 4096
want=none
[ "$cpus" -lt 3 ] || want=some
sc_regions "mp_test np=3 regions: 64 KiB binomial reduce" 3 "$want" reduce binomial 16384
sc_regions "mp_test np=3 regions: 128 KiB binomial reduce" 3 some reduce binomial 32768
# regions, every algorithm of the six collectives and of the block collectives, results
# checked: the 2-rank launch from 8 KiB, the 3- and 5-rank ones from 128 KiB where ranks share
# CPUs; scratch chunks are regions too
for np in 2 3; do
    mp "mp_test np=$np --mem UCOLL_SINGLE_COPY_MIN=regions" "$np" 600 \
        "UCOLL_SINGLE_COPY_MIN=regions UCOLL_TEST_SHM_COUNTS=1" --mem "${SC_COMBOS[@]}"
    sc_mapped_check "mp_test np=$np --mem UCOLL_SINGLE_COPY_MIN=regions" "$np"
done
run_job "block_test np=5 --mem UCOLL_SINGLE_COPY_MIN=regions" 5 600 \
    "UCOLL_SINGLE_COPY_MIN=regions UCOLL_TEST_SHM_COUNTS=1" tests/mp/block_test "${BLOCK_ALGS[@]}" \
    --expect-size 5 --mem
sc_mapped_check "block_test np=5 --mem UCOLL_SINGLE_COPY_MIN=regions" 5
# under regions ucoll's scratch lies in regions too, so that messages sent from it are read
# through mappings as well: a 2-rank bruck allgather of 16 KiB blocks sends one message per
# rank from scratch; 3 iterations, no warm-up, init's measurement left out (its buffers are
# malloc's): per rank 3 single-copy reads, all 3 through a mapping (copied or lent)
name="ucoll_perf np=2 regions: bruck allgather 16 KiB x 3, scratch read through mappings"
run_job "$name" 2 120 "UCOLL_SINGLE_COPY_MIN=regions UCOLL_TEST_SHM_COUNTS=1 UCOLL_ALPHA_US=1 \
UCOLL_BETA_NS_PER_BYTE=0.1 UCOLL_GAMMA_NS_PER_BYTE=0.1" ./ucoll_perf -M -c allgather -a bruck \
    -d int32 -b 16K -e 16K -n 3 -w 0
log="$(job_log "$name")"
got=$(grep -oE 'ucoll: rank [0-9]+ shm .* copies_read [0-9]+ copies_mapped [0-9]+ copies_lent [0-9]+' \
    "$log" | awk '{ print $3, $(NF - 4), $(NF - 2) + $NF }' | sort | tr '\n' ' ')
want="0 3 3 1 3 3 "
[ "$cpus" -ge 2 ] || want="0 0 0 1 0 0 "
if [ "$got" = "$want" ]; then
    pass "$name: rank, reads, reads through mappings: $got"
else
    fail "$name: rank, reads, reads through mappings: '$got' (want '$want')" "$log"
fi
# ...but at most 64 scratch chunks are regions (each holds a descriptor): 200 persistent bruck
# allgathers held at once leave 66 region descriptors per process, the program's two included
# and scratch given back is reused whether its chunk is a region or not: 3 rounds of 200
# requests, each round's freed before the next, end with as many chunks as 1 round (the
# UCOLL_TEST_SHM_COUNTS line's pool_chunks)
pool_chunks() {
    grep -oE 'ucoll: rank [0-9]+ shm .* pool_chunks [0-9]+' "$(job_log "$1")" |
        awk '{ print $3, $NF }' | sort | tr '\n' ' '
}
for np in 2 3; do
    for rounds in 1 3; do
        run_job "pool_test np=$np regions: $rounds x 200 persistent requests" "$np" 300 \
            "UCOLL_SINGLE_COPY_MIN=regions UCOLL_ALLGATHER_ALG=bruck UCOLL_TEST_SHM_COUNTS=1" \
            tests/mp/pool_test --expect-size "$np" --requests 200 --rounds "$rounds" --max 66
    done
    one=$(pool_chunks "pool_test np=$np regions: 1 x 200 persistent requests")
    three=$(pool_chunks "pool_test np=$np regions: 3 x 200 persistent requests")
    if [ -n "$one" ] && [ "$one" = "$three" ]; then
        pass "pool_test np=$np regions: rank, pool chunks after 3 rounds as after 1: $three"
    else
        fail "pool_test np=$np regions: rank, pool chunks: after 1 round '$one', after 3 '$three'"
    fi
done
# a receive given up while its writer, a live peer, still holds the claim on its offered scratch
# (stopped inside the write for longer than the 2 s it is waited for): that scratch is never
# handed out again. 4 ranks, a nonblocking binomial reduce whose rank 2 writes into rank 0's
# scratch and stalls 10 s there (UCOLL_TEST_WRITE_STALL_MS); rank 0 times out (UCOLL_TIMEOUT=3)
# and must count one outrun write and one quarantined chunk, the other ranks none; without the
# stall nobody counts any. A second reduce (on a copy of the world, results checked) then needs
# rank 0 scratch of the same size: with the stall, one chunk more than without.
late_chunks=""
for stall in 0 10000; do
    name="late_write_test np=4 regions: rank 2's write stalled ${stall} ms"
    stalled=""
    [ "$stall" = 0 ] || stalled=--stalled
    run_job "$name" 4 120 "UCOLL_SINGLE_COPY_MIN=regions UCOLL_REDUCE_ALG=binomial UCOLL_TIMEOUT=3 \
UCOLL_TEST_SHM_COUNTS=1 UCOLL_TEST_WRITE_STALL_MS=$stall" tests/mp/late_write_test \
        --expect-size 4 ${stalled:+"$stalled"}
    log="$(job_log "$name")"
    got=$(grep -oE 'ucoll: rank [0-9]+ shm .* writes_outrun [0-9]+ quarantined [0-9]+' "$log" |
        awk '{ print $3, $(NF - 2), $NF }' | sort | tr '\n' ' ')
    want="0 1 1 1 0 0 2 0 0 3 0 0 "
    [ "$stall" != 0 ] || want="0 0 0 1 0 0 2 0 0 3 0 0 "
    if [ "$got" = "$want" ]; then
        pass "$name: rank, outrun writes, quarantined chunks: $got"
    else
        fail "$name: rank, outrun writes, quarantined chunks: '$got' (want '$want')" "$log"
    fi
    late_chunks="$late_chunks $(grep -oE 'ucoll: rank 0 shm .* pool_chunks [0-9]+' "$log" |
        awk '{ print $NF }' | head -n 1)"
done
read -r chunks_free chunks_stalled <<<"$late_chunks"
name="late_write_test np=4 regions: rank 0's pool chunks without and with the stall"
if [ -n "${chunks_stalled:-}" ] && [ "$chunks_stalled" = "$((chunks_free + 1))" ]; then
    pass "$name:$late_chunks"
else
    fail "$name: '$late_chunks' (want one more with it)"
fi
# Yama's ptrace_scope 1 (Ubuntu's default): the probe lets any process of the user read this
# one (PR_SET_PTRACER), and a rank whose single copy is on must keep that permission after
# init, or its peers' reads fail. UCOLL_TEST_PTRACE_SCOPE=1 has the probe act as under scope 1
# on this kernel without Yama; UCOLL_TEST_SHM_COUNTS reports the permission (ptracer_any) at
# finalize. Single copy on: auto at 2 ranks, regions, a stated minimum; off: UCOLL_SHM=0 (no
# probe at all) and 3 ranks on 2 CPUs under auto (none either)
ptracer_kept() {
    local name=$1 np=$2 envs=$3 want=$4 log got
    run_job "$name" "$np" 120 "UCOLL_TEST_PTRACE_SCOPE=1 UCOLL_TEST_SHM_COUNTS=1 $envs" \
        tests/mp/mp_test --expect-size "$np" --colls allreduce --counts 7 --combos int32-sum
    log="$(job_log "$name")"
    got=$(grep -oE 'ucoll: rank [0-9]+ shm .* ptracer_any [0-9]+' "$log" | awk '{ print $3, $NF }' |
        sort | tr '\n' ' ')
    if [ "$got" = "$want" ]; then
        pass "$name: rank, ptracer_any: $got"
    else
        fail "$name: rank, ptracer_any: '$got' (want '$want')" "$log"
    fi
}
if [ "$cpus" -ge 2 ]; then
    ptracer_kept "mp_test np=2 ptrace_scope 1: auto keeps the permission" 2 "" "0 1 1 1 "
fi
ptracer_kept "mp_test np=2 ptrace_scope 1: regions keeps the permission" 2 \
    "UCOLL_SINGLE_COPY_MIN=regions" "0 1 1 1 "
ptracer_kept "mp_test np=2 ptrace_scope 1: a stated minimum keeps the permission" 2 \
    "UCOLL_SINGLE_COPY_MIN=65536" "0 1 1 1 "
ptracer_kept "mp_test np=2 ptrace_scope 1: UCOLL_SHM=0 asks for none" 2 "UCOLL_SHM=0" "0 0 1 0 "
if [ "$cpus" -lt 3 ]; then
    ptracer_kept "mp_test np=3 ptrace_scope 1 on $cpus CPUs: auto asks for none" 3 "" \
        "0 0 1 0 2 0 "
fi
# cost_model_said NAME WHAT WANT PATTERN: rank 0 printed the cost model (UCOLL_PRINT_COST) in
# launch NAME's log, with WANT lines matching the extended regex PATTERN (WHAT names them)
cost_model_said() {
    local name=$1 what=$2 want=$3 pattern=$4 log said
    log="$(job_log "$name")"
    said=$(grep -cE "$pattern" "$log")
    if grep -q '^ucoll: cost model on [0-9]* ranks' "$log" && [ "$said" = "$want" ]; then
        pass "$name: $what $want times"
    else
        fail "$name: $what $said times (want $want)" "$log"
    fi
}
# cost_model_duplex_check NAME WANT: the cost model priced both copies of a rank's exchange
# (one host, with single copy or not) WANT (0 or 1) times
cost_model_duplex_check() {
    cost_model_said "$1" "the cost model's CPU volume said" "$2" 'priced both copies \(CPU volume\)'
}
cost_model_duplex_check "thread_test np=2 UCOLL_SINGLE_COPY_MIN=4097" 1
nocma="mp_test np=3, rank 1 refuses process_vm_readv"
run_job "$nocma" 3 600 "UCOLL_SINGLE_COPY_MIN=4097 UCOLL_TEST_SHM_COUNTS=1 UCOLL_PRINT_COST=1" \
    tests/mp/no_cma 1 tests/mp/mp_test "${MP_ALGS[@]}" --expect-size 3 --counts 0,7,100000 \
    --colls allreduce,bcast,reduce,exscan
sc_reads_check "$nocma" 3 none
cost_model_duplex_check "$nocma" 1
log="$(job_log "$nocma")"
said=$(grep -c 'single copy is off on every rank' "$log")
if [ "$said" = 1 ] && grep -q '^ucoll: rank 1: single copy is off on every rank: process_vm_readv' "$log"; then
    pass "$nocma: said once, by rank 1"
else
    fail "$nocma: 'single copy is off' said $said times (want once, by rank 1)" "$log"
fi
# a stated minimum sends every algorithm's messages from it up by single copy, so init's cost
# model measures that path and prices it for every algorithm (only the receiver copies); a
# minimum above the line's sizes (128 KiB to 1 MiB) leaves it unmeasured. Under regions the
# program's buffers are regions, so init measures from regions too: every one of rank 0's
# single-copy reads at init goes through a mapping (MAPPED "all"); under a numeric minimum,
# from malloc's buffers, none does (MAPPED "none"). Init's reads are left out of the counts
# of UCOLL_TEST_SHM_COUNTS (sc_regions below)
sc_stated_model() {
    local name=$1 np=$2 min=$3 want=$4 from=$5 mapped=${6:-} log counts n m
    run_job "$name" "$np" 120 "UCOLL_SINGLE_COPY_MIN=$min UCOLL_PRINT_COST=1" ./ucoll_perf -M \
        -c bcast -d int32 -b 8 -e 8 -n 1 -w 0
    cost_model_said "$name" "the cost model priced stated single copy for every algorithm" \
        "$want" "^ucoll: cost model: single copy of $from to 0 B \\(every algorithm, stated\\)"
    # under regions a receive whose (+) reads it in place costs no copy (sc_lends), and the
    # model says it prices that; from malloc's buffers nothing is lent
    local lent=0
    [ "$min" != regions ] || lent=$want
    cost_model_said "$name" "the cost model priced lent receives" "$lent" \
        '^ucoll: cost model: single copy from regions: a receive that the next \(\+\) reads in place is lent, priced without a copy$'
    [ -n "$mapped" ] || return 0
    log="$(job_log "$name")"
    # "..., the receiver's copy alone; N of rank 0's M single-copy reads at init through mappings"
    counts=$(sed -nE "s/^ucoll: cost model: single copy .*; ([0-9]+) of rank 0's ([0-9]+) single-copy reads at init through mappings$/\1 \2/p" "$log")
    read -r n m <<<"${counts:-x 0}"
    if [ "$m" -gt 0 ] && { { [ "$mapped" = all ] && [ "$n" = "$m" ]; } ||
        { [ "$mapped" = none ] && [ "$n" = 0 ]; }; }; then
        pass "$name: init's single-copy reads through mappings: $counts ($mapped)"
    else
        fail "$name: init's single-copy reads through mappings: '$counts' (want $mapped of them, more than 0)" "$log"
    fi
}
from=131072
[ "$cpus" -lt 2 ] || from=8192
sc_stated_model "ucoll_perf np=2 regions: the cost model's single copy" 2 regions 1 "$from" all
from=131072
[ "$cpus" -lt 3 ] || from=8192
sc_stated_model "ucoll_perf np=3 regions: the cost model's single copy" 3 regions 1 "$from" all
sc_stated_model "ucoll_perf np=2 UCOLL_SINGLE_COPY_MIN=65536: the cost model's single copy" 2 \
    65536 1 65536 none
sc_stated_model "ucoll_perf np=2 UCOLL_SINGLE_COPY_MIN=262144: no single-copy line" 2 262144 0 \
    '[0-9]+'

# auto's single copy (UCOLL_SINGLE_COPY_MIN unset): on only where no host has more ranks than
# CPUs, for messages of 128 KiB to 4 MiB of the algorithms that send their input (binomial
# reduce, not the allreduces), and init's cost model then measures its path (said once by
# rank 0 under UCOLL_PRINT_COST)
sc_auto() {
    local name=$1 np=$2 want=$3 coll=$4 on=0
    shift 4
    run_job "$name" "$np" 300 "UCOLL_TEST_SHM_COUNTS=1 UCOLL_PRINT_COST=1 ${SC_AUTO_ENV:-}" \
        tests/mp/mp_test --expect-size "$np" --colls "$coll" --combos int32-sum "$@"
    sc_reads_check "$name" "$np" "$want"
    [ "$cpus" -lt "$np" ] || on=1
    cost_model_said "$name" "the cost model priced single copy's measured path" "$on" \
        '^ucoll: cost model: single copy of 131072 to 4194304 B .* beta [0-9.]+ ns/B \(measured\)'
}
# auto: 128 KiB to 4 MiB (64 KiB goes by two copies, measured faster), the binomial reduce
# (its messages are the sender's input), not the recursive-doubling allreduce (measured slower
# by single copy), not rhrd, not 8 MiB
want=none
[ "$cpus" -lt 2 ] || want=some
sc_auto "mp_test np=2 single copy auto: 64 KiB binomial reduce" 2 none reduce \
    --alg-list reduce=binomial --counts 16384
sc_auto "mp_test np=2 single copy auto: 128 KiB binomial reduce" 2 "$want" reduce \
    --alg-list reduce=binomial --counts 32768
sc_auto "mp_test np=2 single copy auto: 512 KiB binomial reduce" 2 "$want" reduce \
    --alg-list reduce=binomial --counts 131072
# segments smaller than auto's minimum: single-copy messages still go whole, and init still
# measures their path
SC_AUTO_ENV=UCOLL_SEGMENT_SIZE=65536 sc_auto \
    "mp_test np=2 single copy auto, 64 KiB segments: 128 KiB binomial reduce" 2 "$want" reduce \
    --alg-list reduce=binomial --counts 32768
sc_auto "mp_test np=2 single copy auto: 128 KiB recursive-doubling allreduce" 2 none allreduce \
    --alg-list allreduce=recursive-doubling --counts 32768
sc_auto "mp_test np=2 single copy auto: 512 KiB rhrd allreduce" 2 none allreduce \
    --alg-list allreduce=rhrd --counts 131072
sc_auto "mp_test np=2 single copy auto: 4 MiB binomial reduce" 2 "$want" reduce \
    --alg-list reduce=binomial --counts 1048576
sc_auto "mp_test np=2 single copy auto: 8 MiB binomial reduce" 2 none reduce \
    --alg-list reduce=binomial --counts 2097152
# one read per message, however many segments of UCOLL_SEGMENT_SIZE (256 KiB) it spans: one
# binomial reduce each of 512 KiB, 1, 2, 4 and 8 MiB at 2 ranks is 4 single-copy messages
# from rank 1 to rank 0 (8 MiB is past auto's bound); split into segments they would be 30
sc_once="ucoll_perf np=2 single copy auto: one read per message"
if [ "$cpus" -ge 2 ]; then
    run_job "$sc_once" 2 180 "UCOLL_TEST_SHM_COUNTS=1" ./ucoll_perf -c reduce -a binomial \
        -d int32 -b 512K -e 8M -f 2 -n 1 -w 0
    log="$(job_log "$sc_once")"
    got=$(grep -oE 'ucoll: rank [0-9]+ shm .* copies_sent [0-9]+ copies_read [0-9]+' "$log" |
        awk '{ print $3, $(NF - 2), $NF }' | sort | tr '\n' ' ')
    if [ "$got" = "0 0 4 1 4 0 " ]; then
        pass "$sc_once: rank 0 read 4, rank 1 sent 4"
    else
        fail "$sc_once: rank, copies sent, copies read: '$got' (want '0 0 4 1 4 0 ')" "$log"
    fi
fi
want=none
[ "$cpus" -lt 3 ] || want=some
sc_auto "mp_test np=3 single copy auto on $cpus CPUs: 128 KiB binomial reduce" 3 "$want" reduce \
    --alg-list reduce=binomial --counts 32768
# rings on one rank only (UCOLL_SHM=0 on rank 0, the cost model given so that init does not
# measure): single copy must be off on every rank, or the two ends of a message split it
# differently (a whole message against 256 KiB segments: UCOLL_ERR_TRUNCATED, or a hang)
mixed="mp_test np=2, UCOLL_SHM=0 on rank 0 only"
run_job "$mixed" 2 300 "UCOLL_ALPHA_US=1 UCOLL_BETA_NS_PER_BYTE=0.1 UCOLL_GAMMA_NS_PER_BYTE=0.05 \
UCOLL_TEST_SHM_COUNTS=1 UCOLL_TIMEOUT=30" \
    sh -c '[ "${OMPI_COMM_WORLD_RANK:-x}" != 0 ] || export UCOLL_SHM=0; exec "$@"' sh \
    tests/mp/mp_test --expect-size 2 --colls reduce,exscan,scan --combos int32-sum \
    --counts 16384,262144,1048576
shm_counts_check "$mixed" 2 none # rank 0 had no rings, so neither rank used them
sc_reads_check "$mixed" 2 none

# stats_test: each rank builds, with src/alg's builders, the schedules of the collectives it
# ran (and finalize's barrier) and checks its UCOLL_STATS line against them: endpoints and PMIx
# address look-ups == the distinct peers of those schedules (not p - 1), messages per channel
section "lazy connections: UCOLL_STATS against the schedules"
for np in 8 16; do
    run_job "stats_test np=$np" "$np" 300 "" tests/mp/stats_test
done
run_job "stats_test np=8 as 2 hosts" 8 300 "UCOLL_TEST_HOSTS=2" tests/mp/stats_test
# UCOLL_CHECK=1: exactly one agreement allreduce more per collective
run_job "stats_test np=8 UCOLL_CHECK=1" 8 300 "UCOLL_CHECK=1" tests/mp/stats_test
# odd ranks in pid namespaces of their own (tests/mp/other_pidns.sh, root only): PMIx counts them
# on this host, but their process ids and segments are not reachable, so no rank may probe or
# map them: mp_test passes, and the odd ranks send nothing through the rings
if [ "$(id -u)" = 0 ] && unshare --pid --fork true 2>/dev/null; then
    run_job "mp_test np=4, odd ranks in other pid namespaces" 4 300 "UCOLL_TEST_SHM_COUNTS=1" \
        tests/mp/other_pidns.sh tests/mp/mp_test "${MP_ALGS[@]}" --expect-size 4 \
        --colls allreduce,bcast,exscan --counts 1,7,5000
    log="$(job_log "mp_test np=4, odd ranks in other pid namespaces")"
    if [ "$(grep -cE '^ucoll: rank [13] shm sent 0 received 0 ' "$log")" = 2 ]; then
        pass "odd ranks in other pid namespaces: no ring to or from them"
    else
        fail "odd ranks in other pid namespaces: rings used across pid namespaces" "$log"
    fi
else
    echo "note: mp_test with ranks in other pid namespaces not run (needs root and unshare --pid)"
fi

if [ "$quick" = 0 ]; then
    section "exclusive scan at more process counts"
    # every exscan and scan algorithm, all dtypes (the dtype-op pairs), odd counts
    for np in 9 13 17; do
        mp "mp_test exscan/scan np=$np" "$np" 900 "" --colls exscan,scan \
            --counts 0,1,3,1000,65537 --big-combos "int32-sum,float64-sum,uint32-bxor,uint64-user-affine"
    done
    mp "mp_test exscan/scan np=5 counts 3,65537" 5 600 "" --colls exscan,scan --counts 3,65537

    section "rhrd and rhrd-classic at non-powers of two"
    # reduce (roots 0, middle, last) and allreduce, in place and not; N-1 and 2^20+3 elements;
    # pipelined with 4 KiB segments (hundreds per message) and unsegmented, alternately
    seg=4096
    for np in 1 2 3 4 5 6 7 8 9 11 13 16 17; do
        n2=1
        while [ $((n2 * 2)) -le "$np" ]; do n2=$((n2 * 2)); done
        counts="0,1,2,3,1000,1048579"
        [ "$n2" -gt 1 ] && counts="$counts,$((n2 - 1))"
        run_job "mp_test rhrd np=$np UCOLL_SEGMENT_SIZE=$seg" "$np" 900 "UCOLL_SEGMENT_SIZE=$seg" \
            tests/mp/mp_test --expect-size "$np" --colls reduce,allreduce \
            --alg-list reduce=rhrd,rhrd-classic --alg-list allreduce=rhrd,rhrd-classic \
            --combos int64-sum,float64-sum,uint32-bxor,float32-max --counts "$counts" \
            --big-combos int64-sum,float64-sum
        if [ "$seg" = 4096 ]; then seg=0; else seg=4096; fi
    done
fi

section "demo"
run_job "demo: record_offsets np=4" 4 120 "" examples/record_offsets "$LOGDIR/records.txt"
# the second demo: 4 ranks from a shell loop, started through the store (no launcher)
run_job "demo: sort_keys_store, 4 ranks by the store" none 300 "" examples/run-store-demo.sh 4 100000

# ---------------------------------------------------------------- Python bindings
# python/: the constants against include/ucoll.h (compiled C), the dtype map and refused starts
# (one process, no init); the pytest suite (every collective against numpy) on 3 ranks under
# mpirun and on 3 ranks started by the store, through ucoll.init and through ucoll.init_store;
# installing the package into a venv
section "Python bindings (python/)"
PY=/usr/bin/python3 # Debian's, which has python3-numpy and python3-pytest
[ -x "$PY" ] || PY=python3
PYTEST=("$PY" -m pytest -q -p no:cacheprovider --color=no)
PYENV="PYTHONDONTWRITEBYTECODE=1 UCOLL_PY_EXPECT_SIZE=3"
run_job "python: constants against ucoll.h, refused starts" none 120 \
    "PYTHONDONTWRITEBYTECODE=1" \
    "${PYTEST[@]}" python/tests/test_constants.py python/tests/test_start.py
run_job "python: pytest np=3" 3 300 "$PYENV" "${PYTEST[@]}" python/tests/test_collectives.py
run_job "python: pytest, 3 ranks by the store (ucoll.init)" none 300 "$PYENV" \
    tests/mp/run_store.sh --np 3 --seconds 250 "${PYTEST[@]}" python/tests/test_collectives.py
run_job "python: pytest, 3 ranks by the store (ucoll.init_store)" none 300 \
    "$PYENV UCOLL_PY_START=init_store" \
    tests/mp/run_store.sh --np 3 --seconds 250 "${PYTEST[@]}" python/tests/test_collectives.py
run_job "python: pip install into a venv, offline" none 300 "" tests/python_install.sh

# ---------------------------------------------------------------- 16-bit floats and AVG
# half_test: allreduce and reduce (every root) with float16/bfloat16 x sum, prod, min, max, avg
# and float32/float64 x avg, every form, in place and not, under auto and each explicit
# algorithm; exscan and scan with 16-bit sums; against double references and their error
# bounds. UCOLL_SEGMENT_SIZE=1024: the larger counts travel in several segments. Once with
# UCOLL_CHECK=1 (AVG against SUM on another rank is UCOLL_ERR_MISMATCH).
section "16-bit floating types and AVG"
HALF_NPS="2 3 4 5 8"
[ "$quick" = 1 ] && HALF_NPS="2 3"
run_job "half_test np=1 (no launcher)" none 300 "UCOLL_SEGMENT_SIZE=1024" \
    tests/mp/half_test --expect-size 1
for np in $HALF_NPS; do
    run_job "half_test np=$np UCOLL_SEGMENT_SIZE=1024" "$np" 900 "UCOLL_SEGMENT_SIZE=1024" \
        tests/mp/half_test --expect-size "$np"
done
run_job "half_test np=3 UCOLL_CHECK=1" 3 300 "UCOLL_CHECK=1 UCOLL_SEGMENT_SIZE=1024" \
    tests/mp/half_test --expect-size 3 --quick

# ---------------------------------------------------------------- block collectives
# block_test: allgather(v), reduce_scatter(_block), alltoall(v), gather(v), scatter(v), every
# algorithm of `ucoll_info -a` (auto included), in place or not, blocking / nonblocking /
# persistent, against references each rank computes; counts 0, 1, p-1, 1000 and one element
# above UCOLL_SEGMENT_SIZE (the default up to 5 ranks, 32 KiB from 6: at 9 ranks the default's
# blocks took 112 s under load, 32 KiB's 19 s). At 16 and 17 ranks a third of the cases, with
# 8 KiB segments.
section "block collectives"
BLOCK_NPS="2 3 4 5 6 7 8 9"
[ "$quick" = 1 ] && BLOCK_NPS="2 3 4"
run_job "block_test np=1 (no launcher)" none 300 "" tests/mp/block_test "${BLOCK_ALGS[@]}" \
    --expect-size 1
for np in $BLOCK_NPS; do
    seg_env=""
    [ "$np" -ge 6 ] && seg_env="UCOLL_SEGMENT_SIZE=32768"
    run_job "block_test np=$np${seg_env:+ $seg_env}" "$np" 600 "$seg_env" tests/mp/block_test \
        "${BLOCK_ALGS[@]}" --expect-size "$np"
done
# UCOLL_CHECK=1: matching calls of every block collective compared first, results unchanged
run_job "block_test np=3 UCOLL_CHECK=1" 3 600 "UCOLL_CHECK=1" tests/mp/block_test \
    "${BLOCK_ALGS[@]}" --expect-size 3 --counts 0,1,p-1,1000
if [ "$quick" = 0 ]; then
    for np in 16 17; do
        run_job "block_test np=$np (a third of the cases)" "$np" 900 "UCOLL_SEGMENT_SIZE=8192" \
            tests/mp/block_test "${BLOCK_ALGS[@]}" --expect-size "$np" --small
    done
fi

# ---------------------------------------------------------------- API tests
# mp_api_test: every collective nonblocking and persistent, 64 concurrent collectives on two
# communicators, splits (odd/even, reversed keys, ...), comm_free, request misuse; it asserts
# the job size (--expect-size). oob_test: ucoll_init_oob through an allgather that the test
# serves itself to the N ranks it forks (no launcher); the ranks assert the world size is N.
section "API tests: nonblocking, persistent, split; ucoll_init_oob"
API_NPS="2 3 5 8"
[ "$quick" = 1 ] && API_NPS="2 3"
run_job "mp_api_test np=1 (no launcher)" none 300 "" tests/mp/mp_api_test --expect-size 1
for np in $API_NPS; do
    run_job "mp_api_test np=$np" "$np" 600 "" tests/mp/mp_api_test --expect-size "$np"
done
if [ "$quick" = 0 ]; then
    run_job "mp_api_test np=4 UCOLL_SEGMENT_SIZE=1000 UCX_RNDV_THRESH=0" 4 600 \
        "UCOLL_SEGMENT_SIZE=1000 UCX_RNDV_THRESH=0" tests/mp/mp_api_test --expect-size 4
fi
for n in 1 3 4; do
    run_job "oob_test ranks=$n (forked by the test)" none 180 "" tests/mp/oob_test --ranks "$n"
done

# ---------------------------------------------------------------- store bootstrap
# No launcher and no PMIx: rank 0 serves UCOLL_STORE, the others connect. store_test forks its
# own jobs (success with rank 0 started last; ranks that disagree on the size, a duplicate
# rank: INVALID_ARG on every rank; nobody serving, a rank that never starts: TIMED_OUT within
# UCOLL_TIMEOUT; rank 0's port in use) and checks the refusals of bad arguments in one process.
# Then mp_test on ranks started by a plain shell loop (tests/mp/run_store.sh: 127.0.0.1, a
# random port, the job once more if rank 0 finds it in use). Then a build configured
# --without-pmix (build/nopmix: the library, mp_test, store_test, oob_test): its ucoll_init
# without the store's variables is NOT_SUPPORTED, and the store and OOB starts work.
section "store bootstrap: no launcher, no PMIx"
STORE_NP=8
[ "$quick" = 1 ] && STORE_NP=4
run_job "store_test (forked jobs, refusals)" none 300 "" tests/mp/store_test
run_job "mp_test np=$STORE_NP through the store, started by a shell loop" none 1000 "" \
    tests/mp/run_store.sh --np "$STORE_NP" --seconds 950 tests/mp/mp_test "${MP_ALGS[@]}" \
    --expect-size "$STORE_NP"
# shellcheck source=tests/sanitize.sh
. tests/sanitize.sh
NOPMIX_DIR="$PWD/build/nopmix"
np_t0=$SECONDS
if ucoll_nopmix_build "$PWD" "$NOPMIX_DIR" "$LOGDIR/nopmix-build.log"; then
    if ldd "$NOPMIX_DIR/obj/.libs/libucoll.so" | grep -q pmix; then
        fail "configure --without-pmix: libucoll.so still links PMIx" "$LOGDIR/nopmix-build.log"
    else
        pass "configure --without-pmix build in $NOPMIX_DIR/obj ($((SECONDS - np_t0)) s)"
    fi
    run_job "without PMIx: store_test --no-pmix" none 300 "" \
        "$NOPMIX_DIR/obj/tests/mp/store_test" --no-pmix
    run_job "without PMIx: mp_test np=4 through the store" none 600 "" \
        tests/mp/run_store.sh --np 4 --seconds 550 "$NOPMIX_DIR/obj/tests/mp/mp_test" \
        --expect-size 4 --counts 0,1,7,1000
    run_job "without PMIx: oob_test ranks=3" none 180 "" "$NOPMIX_DIR/obj/tests/mp/oob_test" \
        --ranks 3
else
    fail "configure --without-pmix build in $NOPMIX_DIR" "$LOGDIR/nopmix-build.log"
fi

# ---------------------------------------------------------------- perf tools
# ucoll_perf checks each size's first result against its own reference, ucoll_vs_mpi against
# Open MPI's: tiny sizes and a few iterations, so only those checks (exit 1) can fail them
section "perf tools: their result checks on the block collectives"
run_job "ucoll_perf alltoallv np=3" 3 180 "" ./ucoll_perf -c alltoallv -b 8 -e 4K -f 8 -n 3 \
    -w 1 -v
run_job "ucoll_perf gather np=3 persistent, in place at root 2" 3 180 "" ./ucoll_perf -c gather \
    -r 2 -p -i -b 8 -e 4K -f 8 -n 3 -w 1 -v
run_job "ucoll_perf reduce_scatter np=3 max" 3 180 "" ./ucoll_perf -c reduce_scatter -o max \
    -b 8 -e 4K -f 8 -n 3 -w 1 -v
# -C sets the caches before each iteration's barrier: `written` writes again the inputs each
# rank's call reads (the first timed result is checked after such rewrites), dirty and clean
# touch other memory only; the table's box names the state
run_job "ucoll_perf np=2 -C written, from ucoll_mem_alloc" 2 120 "" ./ucoll_perf -M -C written \
    -c allreduce -d float32 -b 8 -e 64K -f 8 -n 3 -w 2 -v
run_job "ucoll_perf np=3 -C written, scatter at root 1" 3 180 "" ./ucoll_perf -C written \
    -c scatter -r 1 -b 8 -e 4K -f 8 -n 3 -w 2 -v
run_job "ucoll_perf np=3 -C written, gather in place at root 1, persistent" 3 180 "" \
    ./ucoll_perf -C written -i -p -c gather -r 1 -b 8 -e 4K -f 8 -n 3 -w 2 -v
run_job "ucoll_perf np=2 -C dirty:1M, exscan in place" 2 120 "" ./ucoll_perf -C dirty:1M -i \
    -c exscan -b 8 -e 4K -f 8 -n 3 -w 2 -v
cc_name="ucoll_perf np=2 -C clean:1M, bcast, interleaved"
run_job "$cc_name" 2 120 "" ./ucoll_perf -C clean:1M -I -a binomial,auto -c bcast -b 8 -e 4K \
    -f 8 -n 3 -w 2
if grep -q -E '^\| Caches: +clean: 1048576 B of other memory read before each call' \
    "$(job_log "$cc_name")"; then
    pass "ucoll_perf -C clean:1M: the box names the state"
else
    fail "ucoll_perf -C clean:1M: the box names the state" "$(job_log "$cc_name")"
fi
# a value -C does not know: exit 2 and the reason, before any launch
for bad in "bogus:is not warm, written, dirty or clean" "written:4M:takes no size" \
    "dirty:0:must be at least 1 byte" "clean:2X:is not a byte count"; do
    arg=${bad%:*} want=${bad##*:}
    log="$LOGDIR/ucoll_perf_C_${arg//[^a-zA-Z0-9]/_}.log"
    timeout -k 5 60 ./ucoll_perf -C "$arg" >"$log" 2>&1
    rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$want" "$log"; then
        pass "ucoll_perf -C $arg: exit 2, \"$want\""
    else
        fail "ucoll_perf -C $arg: exit $rc, wanted 2 and \"$want\"" "$log"
    fi
done
if [ -x perf/ucoll_vs_mpi ]; then
    run_job "ucoll_vs_mpi block collectives np=3 root 1" 3 300 "" perf/ucoll_vs_mpi \
        -c allgather,reduce_scatter_block,alltoall,gather,scatter -r 1 -b 8 -e 4K -f 8 -n 3 -w 1 -v
fi

# ucoll_sched -a auto names the library's own choice (cost_select) with the model's defaults
# (1 us, 0.1 ns/B, 0.1 ns/B: none of the UCOLL_* cost variables set): allreduce of 16 MiB on 5
# ranks is the ring, 8/5 of the vector in 8 rounds, no copies, against rs-ag's 8/5 in 6 rounds
# and its 2 vectors of copies and rhrd's 5/2 in 6
section "perf tools: ucoll_sched's auto"
sched_log="$LOGDIR/ucoll_sched_auto.log"
env -u UCOLL_ALPHA_US -u UCOLL_BETA_NS_PER_BYTE -u UCOLL_GAMMA_NS_PER_BYTE \
    -u UCOLL_ALLREDUCE_RHRD_MIN ./ucoll_sched -c allreduce -a auto -p 5 -m 16777216 \
    >"$sched_log" 2>&1
if grep -q -E '^coll=allreduce alg=ring p=5 bytes=16777216 rounds=8 .* auto=1$' "$sched_log"; then
    pass "ucoll_sched -c allreduce -a auto -p 5 -m 16777216: ring"
else
    fail "ucoll_sched -c allreduce -a auto -p 5 -m 16777216: ring" "$sched_log"
fi

# UCOLL_PRINT_ALG=1: rank 0 of the comm says each choice auto makes anew. With
# UCOLL_ALLREDUCE_RHRD_MIN=65536 auto's allreduce is recursive-doubling below 64 KiB and rhrd
# from it. ucoll_perf chooses twice per size: after the first of its 3 iterations (-w 1 -n 2) it
# checks the result with an allreduce of one int32, after which auto's remembered choice no
# longer applies. So each float32 size is said exactly twice (six times if every rank of the 3
# spoke), and a comm whose algorithm is named (and applies) says nothing.
section "auto's choices said (UCOLL_PRINT_ALG)"
pa_auto="ucoll_perf np=3 UCOLL_PRINT_ALG=1 allreduce auto"
pa_named="ucoll_perf np=3 UCOLL_PRINT_ALG=1 allreduce rhrd"
run_job "$pa_auto" 3 180 "UCOLL_PRINT_ALG=1 UCOLL_ALLREDUCE_RHRD_MIN=65536" ./ucoll_perf \
    -c allreduce -a auto -d float32 -b 16K -e 256K -f 4 -n 2 -w 1
run_job "$pa_named" 3 180 "UCOLL_PRINT_ALG=1" ./ucoll_perf -c allreduce -a rhrd -d float32 \
    -b 16K -e 256K -f 4 -n 2 -w 1
pa_said() {
    grep -E '^ucoll: auto on comm [0-9]+ \([0-9]+ ranks\): allreduce of [0-9]+ float32 ' \
        "$(job_log "$1")" | sed -E 's/^ucoll: auto on //' | sort | uniq -c |
        awk '{ $1 = $1; print }' | tr '\n' ';'
}
want="2 comm 0 (3 ranks): allreduce of 16384 float32 (65536 B): rhrd;"
want="$want""2 comm 0 (3 ranks): allreduce of 4096 float32 (16384 B): recursive-doubling;"
want="$want""2 comm 0 (3 ranks): allreduce of 65536 float32 (262144 B): rhrd;"
got=$(pa_said "$pa_auto")
if [ "$got" = "$want" ]; then
    pass "$pa_auto: each size's choice said twice, by rank 0"
else
    fail "$pa_auto: said '$got' (want '$want')" "$(job_log "$pa_auto")"
fi
got=$(pa_said "$pa_named")
if [ -z "$got" ]; then
    pass "$pa_named: nothing said"
else
    fail "$pa_named: said '$got' (want nothing)" "$(job_log "$pa_named")"
fi

# ucoll_sched on a layout (algorithms.md 4.1): 4 hosts x 2 ranks, 1 KiB, the model's defaults.
# Flat recursive doubling: every rank's partners r^2 and r^4 are on other hosts, 16 messages of
# 1 KiB cross; node-aware: binomial on each host, recursive doubling among 4 leaders (8
# messages of 1 KiB), binomial again: 1 + 2 + 1 rounds. exscan node-aware on a round-robin
# layout, and node-aware without a layout, are refused (status 2).
section "perf tools: ucoll_sched on a layout"
sched_log="$LOGDIR/ucoll_sched_layout.log"
env -u UCOLL_ALPHA_US -u UCOLL_BETA_NS_PER_BYTE -u UCOLL_GAMMA_NS_PER_BYTE \
    -u UCOLL_ALLREDUCE_RHRD_MIN -u UCOLL_REDUCE_RHRD_MIN \
    ./ucoll_sched -c allreduce -a all --hosts 4 --per-host 2 -m 1024 >"$sched_log" 2>&1
sched_rc=$?
./ucoll_sched -c exscan -a node-aware -p 8 --round-robin 2 >>"$sched_log" 2>&1
rr_rc=$?
./ucoll_sched -c allreduce -a node-aware -p 8 >>"$sched_log" 2>&1
none_rc=$?
if [ "$sched_rc" = 0 ] && [ "$rr_rc" = 2 ] && [ "$none_rc" = 2 ] &&
    grep -q -E '^coll=allreduce alg=recursive-doubling p=8 bytes=1024 hosts=4 rounds=3 .* cross_msgs=16 cross_bytes=16384 ' "$sched_log" &&
    grep -q -E '^coll=allreduce alg=node-aware p=8 bytes=1024 hosts=4 rounds=4 .* cross_msgs=8 cross_bytes=8192 max_rank_cross_msgs=2 max_rank_cross_bytes=2048 leaders=recursive-doubling local_reduce=binomial local_bcast=binomial$' "$sched_log"; then
    pass "ucoll_sched --hosts 4 --per-host 2: flat and node-aware figures; refusals"
else
    fail "ucoll_sched --hosts 4 --per-host 2: flat and node-aware figures; refusals" "$sched_log"
fi

# ---------------------------------------------------------------- installed library
section "installed library: a program built with pkg-config ucoll"
DEST="$LOGDIR/destdir"
API_BIN="$LOGDIR/api_user"
if make install DESTDIR="$DEST" >"$LOGDIR/install.log" 2>&1; then
    # The staged ucoll.pc names the configured prefix (a staged tree is not where it will live);
    # a copy with prefix= pointing into DESTDIR is what `configure --prefix=DESTDIR/...` would
    # have installed. Nothing else of it changes.
    pc=$(find "$DEST" -name ucoll.pc | head -n 1)
    prefix=$(sed -n 's/^prefix=//p' "${pc:-/dev/null}")
    mkdir -p "$LOGDIR/pkgconfig"
    sed "s|^prefix=.*|prefix=$DEST$prefix|" "${pc:-/dev/null}" >"$LOGDIR/pkgconfig/ucoll.pc"
    export PKG_CONFIG_PATH="$LOGDIR/pkgconfig"
    flags=$(pkg-config --cflags --libs ucoll 2>>"$LOGDIR/install.log")
    libdir=$(pkg-config --variable=libdir ucoll 2>>"$LOGDIR/install.log")
    {
        echo "+ installed files:"
        find "$DEST" -type f -o -type l | sort
        echo "+ PKG_CONFIG_PATH=$PKG_CONFIG_PATH pkg-config --cflags --libs ucoll"
        echo "$flags"
    } >>"$LOGDIR/install.log"
    unset PKG_CONFIG_PATH
    # shellcheck disable=SC2086  # $flags is a list of compiler arguments
    if [ -n "$pc" ] && [ -f "$libdir/libucoll.so" ] &&
        [ -f "$DEST$prefix/include/ucoll.h" ] && [ -x "$DEST$prefix/bin/ucoll_sched" ] &&
        gcc -std=c11 -Wall -Wextra -Werror -o "$API_BIN" tests/api_user/api_user.c $flags \
            -Wl,-rpath,"$libdir" >>"$LOGDIR/install.log" 2>&1 &&
        ldd "$API_BIN" >"$LOGDIR/ldd.log" 2>&1 &&
        grep -q "libucoll.so.* => $libdir/" "$LOGDIR/ldd.log"; then
        pass "make install DESTDIR=..., pkg-config ucoll, build of tests/api_user/api_user.c"
        for np in 1 2 3 4 5 6 7 8; do
            run_job "api_user np=$np" "$np" 180 "" "$API_BIN" --expect-size "$np" \
                "${ALG_LISTS[@]}"
        done
    else
        fail "installed files, or building tests/api_user/api_user.c against them" \
            "$LOGDIR/install.log"
    fi
else
    fail "make install DESTDIR=$DEST" "$LOGDIR/install.log"
fi

# ---------------------------------------------------------------- robustness
# fault: tests/mp/run_fault.sh launches tests/mp/fault_test once per repetition (a killed rank
# ends its launch), under mpirun --enable-recovery with UCOLL_TIMEOUT=5 and
# UCX_KEEPALIVE_INTERVAL=1s; in every launch one rank dies by SIGKILL at a random point (and in
# one more launch stops, SIGSTOP; in two more it dies before the survivors' first sends to it)
# and every survivor must report PEER_FAILED or TIMED_OUT within 10 s and get through
# ucoll_finalize. The script is one test. Once more with UCX peer
# error handling on every endpoint (UCOLL_FAILURE_DETECTION=ucx) instead of process-id probes,
# and once as a job on 2 simulated hosts (UCOLL_TEST_HOSTS=2: ranks on the other "host" are
# reached through the NET context, with UCX error handling and rendezvous).
# badinput: the bad-argument matrix and mismatched counts (UCOLL_TIMEOUT=3: some ranks wait for
# ranks that gave up). stress: 10000 random calls of all 16 collectives, checked, RSS within 10 %.
section "robustness: a dead rank, bad input, a long random mix"
fault_reps=20 stress_ops=10000 stress_warm=2000
[ "$quick" = 0 ] || fault_reps=2 stress_ops=1000 stress_warm=200
run_job "fault: SIGKILL of a rank, np=4, $fault_reps launches" none 400 "" \
    tests/mp/run_fault.sh --np 4 --reps "$fault_reps" --seed 1
run_job "fault: SIGKILL of a rank, np=7, $fault_reps launches" none 500 "" \
    tests/mp/run_fault.sh --np 7 --reps "$fault_reps" --seed 101
run_job "fault: SIGKILL of a rank, np=4, UCOLL_FAILURE_DETECTION=ucx" none 400 \
    "UCOLL_FAILURE_DETECTION=ucx" tests/mp/run_fault.sh --np 4 --reps "$fault_reps" --seed 201
run_job "fault: SIGKILL of a rank, np=6 as 2 hosts" none 500 "UCOLL_TEST_HOSTS=2" \
    tests/mp/run_fault.sh --np 6 --reps "$fault_reps" --seed 301
# the same with 64 MiB collectives read by single copy: the victim dies (or stops) while a
# survivor reads its buffer, or while its own buffer is read
run_job "fault: SIGKILL during 64 MiB single-copy transfers, np=4, $fault_reps launches" none 900 \
    "UCOLL_SINGLE_COPY_MIN=65536" \
    tests/mp/run_fault.sh --np 4 --reps "$fault_reps" --gone 0 --big 67108864 --seed 401
# and with buffers from ucoll_mem_alloc: survivors map the victim's regions and reduce out of
# them, or the victim holds theirs
run_job "fault: SIGKILL during 64 MiB transfers from ucoll_mem_alloc, np=4, $fault_reps launches" \
    none 900 "UCOLL_SINGLE_COPY_MIN=65536" \
    tests/mp/run_fault.sh --np 4 --reps "$fault_reps" --gone 0 --big 67108864 --mem --seed 501
# shrink: tests/mp/run_shrink.sh launches tests/mp/shrink_test on 6 ranks, one or two of them
# SIGKILLed before, inside or between collectives (or, by a timer, anywhere, a shrink included);
# the survivors must shrink to exactly themselves and run 1000 verified collectives of all 16
# kinds. Then the second victim is the coordinator of the survivors' shrink, dying after it gave
# its decision to some of them (the others take it over), on one host and on 2 simulated hosts.
# ucoll_finalize after a death waits up to 2 s for the other survivors: every finalize within 7 s.
run_job "shrink: 1 of 6 ranks killed, $fault_reps launches" none 500 "" \
    tests/mp/run_shrink.sh --np 6 --victims 1 --reps "$fault_reps" --seed 1
run_job "shrink: 2 of 6 ranks killed, $fault_reps launches" none 500 "" \
    tests/mp/run_shrink.sh --np 6 --victims 2 --reps "$fault_reps" --seed 101
run_job "shrink: the coordinator dies in the agreement, $fault_reps launches" none 500 "" \
    tests/mp/run_shrink.sh --np 6 --victims 2 --coordinator --reps "$fault_reps" --seed 201
run_job "shrink: the coordinator dies, np=6 as 2 hosts" none 500 "UCOLL_TEST_HOSTS=2" \
    tests/mp/run_shrink.sh --np 6 --victims 2 --coordinator --reps 10 --seed 301
# finalize right after a death nobody saw, with no UCOLL_TIMEOUT: bounded, PEER_FAILED everywhere
run_job "shrink: finalize after an unseen death, np=8, 5 launches" none 300 "" \
    tests/mp/run_shrink.sh --np 8 --victims 1 --finalize-only --reps 5 --seed 401
# an auto exscan started on one comm while other ranks are in a barrier on another: no call
# may block on a collective of its own (UCOLL_TIMEOUT turns a hang into an error)
for np in 3 4 5; do
    run_job "order_test np=$np" "$np" 240 "UCOLL_TIMEOUT=30" tests/mp/order_test --expect-size "$np"
done
# a collective takes only its own messages, through the rings and through UCX alone: late
# messages of a TIMED_OUT one (ranks 0 and 2 run with UCOLL_TIMEOUT=1 there) and of a TRUNCATED
# one; then, with the job's timeout, 10000 collectives on one comm (the sequence field wraps)
# after a TRUNCATED on another, 2 x 1000 in flight, the limit of 4095 in flight, and splits until
# the 4094 comm ids run out
for shm in 1 0; do
    run_job "isolation np=4 UCOLL_SHM=$shm: late messages" 4 120 "UCOLL_SHM=$shm" \
        tests/mp/isolation_test --expect-size 4 --phases late,truncated
    run_job "isolation np=4 UCOLL_SHM=$shm: wraps, in flight" 4 300 "UCOLL_SHM=$shm" \
        tests/mp/isolation_test --expect-size 4 --phases truncated,many,inflight,ids
done
run_job "badinput np=4" 4 300 "UCOLL_TIMEOUT=3 UCOLL_TEST_SHM_COUNTS=1" tests/mp/badinput_test
# its counts across the on-host channel's size limit need the channel in use
shm_counts_check "badinput np=4" 4 some
# overlap: nonblocking collectives waited for after 3 s of computation, UCOLL_TIMEOUT=2 (set by
# the program): time outside ucoll is no timeout
run_job "overlap np=3" 3 120 "" tests/mp/overlap_test --expect-size 3
# UCOLL_THREAD_MULTIPLE: 4 threads with 10000 checked collectives each on comms of their own,
# then requests completed by another thread than the one that posted them
for np in 2 4; do
    run_job "thread_test np=$np" "$np" 120 "" tests/mp/thread_test --expect-size "$np"
done
# a thread inside a blocking call keeps its own request (its status is its own, here
# UCOLL_ERR_MISMATCH while another thread's call of the same shape succeeds) and its user op
run_job "thread_race_test np=2: own status" 2 120 "UCOLL_CHECK=1" \
    tests/mp/thread_race_test --case status
run_job "thread_race_test np=2: op in use" 2 120 "" tests/mp/thread_race_test --case opfree
# config: malformed UCOLL_* values make ucoll_init fail with a message naming the variable
run_job "config_test (no launcher)" none 120 "" tests/mp/config_test
# settings that must agree, differing between even and odd ranks: ucoll_init fails with
# INVALID_ARG on every rank, each naming the variable; no UCOLL_TIMEOUT (a hang is a timeout)
for np in 2 3; do
    for setting in "UCOLL_ALLREDUCE_ALG rhrd recursive-doubling" "UCOLL_SEGMENT_SIZE 1 -" \
        "UCOLL_GAMMA_NS_PER_BYTE 0.5 -" "UCOLL_CHECK 1 0" "UCOLL_FAILURE_DETECTION auto ucx"; do
        # shellcheck disable=SC2086  # the setting is three words: VAR EVEN ODD
        run_job "agree_test np=$np: ${setting%% *} differs" "$np" 120 "" \
            tests/mp/agree_test --init $setting
    done
done
# UCOLL_CHECK=1: every field mismatching in turn in every form, then exact results
for np in 2 3 5; do
    run_job "agree_test --check np=$np" "$np" 300 "" tests/mp/agree_test --check --expect-size "$np"
done
run_job "stress np=8: $stress_ops calls" 8 1200 "" \
    tests/mp/stress_test --expect-size 8 --ops "$stress_ops" --warmup-ops "$stress_warm" \
    "${MP_ALGS[@]}" "${BLOCK_ALGS[@]}"

# ---------------------------------------------------------------- progress by the caller
# progress driven by the caller (tests/mp/progress_test.c): an epoll loop running 1000 mixed
# collectives by callbacks only, a progress thread completing the main thread's posts, the
# argument errors, an idle 2 s wait in UCOLL_WAIT_MODE=sleep, which must cost rank 0 under a
# quarter of its wall time in CPU, blocking waits asleep beside a progress thread, and
# mp_api_test in sleep mode
section "progress: callbacks, ucoll_progress, event fd"
for mode in epoll thread errors; do
    run_job "progress_test $mode np=4" 4 180 "" tests/mp/progress_test --expect-size 4 --mode "$mode"
done
run_job "progress_test idle np=2 UCOLL_WAIT_MODE=sleep" 2 120 "UCOLL_WAIT_MODE=sleep" \
    tests/mp/progress_test --expect-size 2 --mode idle --max-cpu 0.25
# blocking waits asleep while a progress thread, asleep on the same fd, finishes their requests
run_job "progress_test sleepwait np=2 UCOLL_WAIT_MODE=sleep" 2 180 "UCOLL_WAIT_MODE=sleep" \
    tests/mp/progress_test --expect-size 2 --mode sleepwait
# every collective's forms once more with blocking waits asleep on the event fd
run_job "mp_api_test np=4 UCOLL_WAIT_MODE=sleep" 4 600 "UCOLL_WAIT_MODE=sleep" \
    tests/mp/mp_api_test --expect-size 4

# ---------------------------------------------------------------- Slurm
# A private single-node Slurm (tests/slurm/slurm-up.sh: munged, slurmctld, slurmd, all under
# $LOGDIR/slurm, MpiDefault=pmix) runs mp_test under `srun --mpi=pmix`: ucoll bootstraps through
# Slurm's PMIx server instead of mpirun's. The daemons are stopped by pid at the end
# (tests/slurm/slurm-down.sh). A cluster that does not come up is a failed test.
section "multi-process tests under Slurm (srun --mpi=pmix)"
SLURM_DIR="$LOGDIR/slurm"
slurm_up_args=()
[ "$install" = 1 ] || slurm_up_args=(--no-install)
trap 'tests/slurm/slurm-down.sh "$SLURM_DIR" >/dev/null 2>&1' EXIT
if [ "$slurm" = 0 ]; then
    echo "skipped (--no-slurm)"
elif tests/slurm/slurm-up.sh "${slurm_up_args[@]}" "$SLURM_DIR" >"$LOGDIR/slurm-up.log" 2>&1
then
    slurm_what=$(tail -n 1 "$LOGDIR/slurm-up.log" | sed 's/^slurm-up: cluster ready: //; s/;.*//')
    pass "slurm: single-node cluster up ($slurm_what)"
    export SLURM_CONF="$SLURM_DIR/slurm.conf"
    # srun_mp NP SECONDS [MP_TEST_OPTIONS]: mp_test on NP tasks under srun, as one test. srun
    # runs in ucoll_launch's process group under `timeout` (np "none": no mpirun); more tasks
    # than cores need --overcommit; one failing task ends the step (--kill-on-bad-exit).
    srun_mp() {
        local np=$1 secs=$2
        shift 2
        run_job "srun mp_test np=$np" none "$secs" "" \
            srun --mpi=pmix --overcommit --kill-on-bad-exit=1 --immediate=60 -n "$np" \
            tests/mp/mp_test "${MP_ALGS[@]}" --expect-size "$np" "$@"
    }
    if [ "$quick" = 1 ]; then
        for np in 1 2 3; do
            srun_mp "$np" 300 --counts 0,1,7,1000
        done
    else
        for np in 1 2 3 4 5 8; do
            srun_mp "$np" 600 --counts 0,1,7,1000,20000
        done
    fi
    unset SLURM_CONF
    if tests/slurm/slurm-down.sh "$SLURM_DIR" >"$LOGDIR/slurm-down.log" 2>&1; then
        pass "slurm: daemons stopped by pid (slurmd, slurmctld, munged)"
    else
        fail "slurm: daemons stopped by pid (tests/slurm/slurm-down.sh)" "$LOGDIR/slurm-down.log"
    fi
else
    fail "slurm: single-node cluster up (tests/slurm/slurm-up.sh; nothing ran under srun)" \
        "$LOGDIR/slurm-up.log"
fi
trap - EXIT

section "many hosts: a Slurm cluster of network namespaces (tests/cluster)"
# 4 hosts, each its own network, pid, IPC, UTS and mount namespaces, on a bridge; srun on h1.
# The suite across hosts (tests/cluster/run-cluster-tests.sh), then host failures
# (tests/cluster/run-host-faults.sh): a whole host's job processes SIGKILLed, and a host's link
# set down and left down; and a cut-off rank's first exchange with new peers
# (tests/cluster/run-first-contact.sh)
CLUSTER_DIR="$PWD/build/cluster"
if [ "$cluster" = 0 ] || [ "$slurm" = 0 ]; then
    echo "skipped (--no-cluster or --no-slurm)"
elif [ "$(id -u)" != 0 ] || ! unshare --net --uts --ipc --mount --pid --fork true 2>/dev/null; then
    fail "cluster: namespaces (needs root and unshare)"
else
    trap 'tests/cluster/cluster-down.sh "$CLUSTER_DIR" >/dev/null 2>&1' EXIT
    if tests/cluster/cluster-up.sh "${slurm_up_args[@]}" "$CLUSTER_DIR" 4 \
        >"$LOGDIR/cluster-up.log" 2>&1; then
        pass "cluster: 4 namespace hosts, slurmctld on h1, a slurmd on each, a job on every host"
        cluster_args=()
        [ "$quick" = 1 ] && cluster_args=(--quick)
        tests/cluster/run-cluster-tests.sh "$CLUSTER_DIR" "${cluster_args[@]}" \
            >"$LOGDIR/cluster-tests.log" 2>&1
        while read -r verdict rest; do
            case $verdict in
            PASS) pass "cluster: $rest" ;;
            FAIL) fail "cluster: $rest" "$LOGDIR/cluster-tests.log" ;;
            esac
        done < <(grep -E '^(PASS|FAIL)  ' "$LOGDIR/cluster-tests.log")
        grep -qE '^run-cluster-tests: [0-9]+ passed' "$LOGDIR/cluster-tests.log" ||
            fail "cluster: run-cluster-tests.sh did not finish" "$LOGDIR/cluster-tests.log"
        fault_launches=10
        [ "$quick" = 1 ] && fault_launches=2
        for kind in kill link; do
            log="$LOGDIR/cluster-faults-$kind.log"
            if tests/cluster/run-host-faults.sh "$CLUSTER_DIR" "$kind" "$fault_launches" \
                >"$log" 2>&1; then
                pass "cluster: host failures ($kind), $(tail -n 1 "$log")"
            else
                fail "cluster: host failures ($kind)" "$log"
            fi
        done
        log="$LOGDIR/cluster-first-contact.log"
        if tests/cluster/run-first-contact.sh "$CLUSTER_DIR" >"$log" 2>&1; then
            pass "cluster: $(head -n 1 "$log")"
        else
            fail "cluster: first contact after a cut link (run-first-contact.sh)" "$log"
        fi
    else
        fail "cluster: 4 namespace hosts up (tests/cluster/cluster-up.sh)" "$LOGDIR/cluster-up.log"
    fi
    if tests/cluster/cluster-down.sh "$CLUSTER_DIR" >"$LOGDIR/cluster-down.log" 2>&1 &&
        [ -z "$(ls -A "$CLUSTER_DIR/pids" 2>/dev/null)" ]; then
        pass "cluster: every daemon stopped by pid, every host's namespaces ended"
    else
        fail "cluster: cluster-down.sh" "$LOGDIR/cluster-down.log"
    fi
    trap - EXIT
fi

# ---------------------------------------------------------------- sanitizers
# The Check unit tests and mp_test at np = 2 and 3 from an ASan+UBSan build (tests/sanitize.sh:
# out of tree, in build/asan), then mp_test at np = 2 with each rank under valgrind's memcheck
# (the normal build). Any report fails the test; the only suppressions are PMIx's own leaks
# (tests/asan.supp, tests/valgrind.supp). Then thread_test at np = 2 from a ThreadSanitizer
# build (build/tsan): any report fails it.
# shellcheck source=tests/sanitize.sh
. tests/sanitize.sh
section "sanitizers: ASan + UBSan build (build/asan)"
SAN_DIR="$PWD/build/asan"
san_t0=$SECONDS
if ucoll_san_build "$PWD" "$SAN_DIR" "$LOGDIR/asan-build.log"; then
    pass "asan+ubsan build in $SAN_DIR/obj ($((SECONDS - san_t0)) s): CFLAGS=$UCOLL_SAN_CFLAGS"

    section "sanitizers: unit tests (Check) under ASan + UBSan"
    # CK_FORK=no: one process per program, as forking an ASan process for every test is slow;
    # CK_EXCLUDE_TAGS=long leaves out check_schedules' p <= 4096 sweep (the code the p <= 256
    # tests run, tens of minutes under ASan) and check_cost's closed forms against every
    # p <= 4096, check_pipeline's sweeps beyond p = 64 (the normal make check runs them all)
    rm -f "$SAN_DIR"/obj/tests/unit/*.log "$SAN_DIR"/obj/tests/unit/*.trs
    (
        for kv in $UCOLL_SAN_UNIT_ENVS CK_FORK=no CK_EXCLUDE_TAGS=long; do export "${kv?}"; done
        # the unit tests only: neither make check's launches nor its exported-symbols test
        cd "$SAN_DIR/obj" && timeout -k 5 1200 make -j2 check MP_CHECKS= EXPORT_CHECKS=
    ) >"$LOGDIR/asan-check.log" 2>&1
    san_rc=$?
    san_n=0
    for f in "$SAN_DIR"/obj/tests/unit/*.log; do
        [ -f "$f" ] || continue
        t=$(basename "$f" .log)
        cp "$f" "$LOGDIR/asan-unit-$t.log"
        san_n=$((san_n + 1))
        checks=$(grep -o -E 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$f" | tail -n 1)
        if grep -q '^:test-result: PASS' "$SAN_DIR/obj/tests/unit/$t.trs" 2>/dev/null &&
            ! grep -q -E 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$f"; then
            pass "asan+ubsan: $t: $checks"
        else
            fail "asan+ubsan: $t: ${checks:-no Check summary}" "$LOGDIR/asan-unit-$t.log"
        fi
    done
    if [ "$san_n" = 0 ] || { [ "$san_rc" != 0 ] && [ "$san_rc" != 2 ]; }; then
        fail "asan+ubsan: make check (status $san_rc, $san_n logs)" "$LOGDIR/asan-check.log"
    fi

    section "sanitizers: multi-process tests under ASan + UBSan"
    SAN_MP="$SAN_DIR/obj/tests/mp/mp_test"
    if [ "$quick" = 1 ]; then
        run_job "asan+ubsan: mp_test np=2" 2 600 "$UCOLL_SAN_ENVS" \
            "$SAN_MP" "${MP_ALGS[@]}" --expect-size 2 --counts 0,1,7,1000
    else
        # every message by rendezvous on 2 ranks; the default protocols and counts on 3
        run_job "asan+ubsan: mp_test np=2 UCX_RNDV_THRESH=0" 2 900 \
            "$UCOLL_SAN_ENVS UCX_RNDV_THRESH=0" \
            "$SAN_MP" "${MP_ALGS[@]}" --expect-size 2 --counts 0,1,7,1000,20000
        run_job "asan+ubsan: mp_test np=3" 3 900 "$UCOLL_SAN_ENVS" \
            "$SAN_MP" "${MP_ALGS[@]}" --expect-size 3
    fi
    # the misuse cases of the bad-input matrix (overlapping buffers, an op freed in use, ucoll
    # called from a user op and from a forked child)
    run_job "asan+ubsan: badinput misuse np=3" 3 600 "$UCOLL_SAN_ENVS UCOLL_TIMEOUT=10" \
        "$SAN_DIR/obj/tests/mp/badinput_test" --only-misuse
    # ucoll_comm_shrink's agreement with its coordinator dying in it, and finalize after that
    run_job "asan+ubsan: shrink, the coordinator dies, 3 launches" none 300 "$UCOLL_SAN_ENVS" \
        tests/mp/run_shrink.sh --np 6 --victims 2 --coordinator --reps 3 --seed 501 \
        --bin "$SAN_DIR/obj/tests/mp/shrink_test"
else
    fail "asan+ubsan build (tests/sanitize.sh) in $SAN_DIR" "$LOGDIR/asan-build.log"
fi

section "sanitizers: ThreadSanitizer build (build/tsan)"
TSAN_DIR="$PWD/build/tsan"
san_t0=$SECONDS
if ucoll_tsan_build "$PWD" "$TSAN_DIR" "$LOGDIR/tsan-build.log"; then
    pass "tsan build in $TSAN_DIR/obj ($((SECONDS - san_t0)) s): CFLAGS=$UCOLL_TSAN_CFLAGS"
    # every rank's threads under TSan; a data race or lock-order report fails the launch
    run_job "tsan: thread_test np=2" 2 600 "$UCOLL_TSAN_ENVS" \
        "$TSAN_DIR/obj/tests/mp/thread_test" --expect-size 2
    # the same with waits asleep on one shared event fd (a timer pushed back by every thread's
    # arm once made this run take over 600 s), and the progress thread of progress_test
    run_job "tsan: thread_test np=2 UCOLL_WAIT_MODE=sleep" 2 600 \
        "$UCOLL_TSAN_ENVS UCOLL_WAIT_MODE=sleep" "$TSAN_DIR/obj/tests/mp/thread_test" --expect-size 2
    run_job "tsan: progress_test thread np=2" 2 600 "$UCOLL_TSAN_ENVS" \
        "$TSAN_DIR/obj/tests/mp/progress_test" --expect-size 2 --mode thread
else
    fail "tsan build (tests/sanitize.sh) in $TSAN_DIR" "$LOGDIR/tsan-build.log"
fi

section "valgrind (memcheck) on every rank"
if [ "$install" = 1 ] && ! command -v valgrind >/dev/null 2>&1; then
    UCOLL_DEB_PACKAGES=valgrind ucoll_need_packages >"$LOGDIR/valgrind-install.log" 2>&1
fi
if command -v valgrind >/dev/null 2>&1; then
    # the normal build; libtool's execute mode runs valgrind on the real program, not the
    # wrapper script. A smaller case list: valgrind slows everything tens of times.
    vg_counts=0,1,7,1000,20000
    [ "$quick" = 0 ] || vg_counts=0,1,7
    run_job "valgrind: mp_test np=2 (memcheck, leaks)" 2 900 "UCOLL_TIMEOUT=600" \
        ./libtool --mode=execute "${UCOLL_VALGRIND[@]}" tests/mp/mp_test "${MP_ALGS[@]}" \
        --expect-size 2 --counts "$vg_counts" \
        --algs linear,recursive-doubling,roughly-halving,binomial,doubling,dissemination,auto
else
    fail "valgrind: not installed (apt-get install valgrind)" "$LOGDIR/valgrind-install.log"
fi

finish
