# tests/sanitize.sh: shell functions for the sanitizer and valgrind runs of tests/run-tests.sh
# (sourced, not run).
#
# AddressSanitizer + UndefinedBehaviorSanitizer: ucoll_san_build builds the tree once more,
# out of tree, with UCOLL_SAN_CFLAGS (gcc's libasan8 and libubsan1 come with gcc-12 on Debian
# 12); the Check unit tests and mp_test run from that build with UCOLL_SAN_ENVS: any ASan or
# UBSan report ends the process with a non-zero status, and LeakSanitizer reports every leak at
# exit except PMIx's own, listed (with the reasons) in tests/asan.supp.
#
# UCX under ASan: nothing to set with the transports used here (tcp, shared memory, cma on
# loopback): UCX's memory hooks (UCM) are installed only for transports with a registration
# cache (InfiniBand, ...), and none is used. On a machine where UCX does install them, its
# malloc/mmap patching and ASan's interceptors get in each other's way; there run with
# UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none (checked here to change nothing of the
# results; UCOLL_SAN_ENVS leaves UCX alone so that the tests see UCX as users do).
#
# valgrind: UCOLL_VALGRIND is the memcheck command line for one rank of a normal (unsanitized)
# build: every error, and every definite leak, makes valgrind exit with status 99; the only
# suppressions are PMIx's two leaks in tests/valgrind.supp.
# shellcheck shell=bash

UCOLL_SAN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

UCOLL_SAN_CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer"
UCOLL_SAN_CFLAGS="$UCOLL_SAN_CFLAGS -fno-sanitize-recover=all"
UCOLL_SAN_LDFLAGS="-fsanitize=address,undefined"

# Runtime options, as run_job's "VAR=VALUE ..." list (no value has a space). fast_unwind_on_malloc
# =0 gives leak reports the whole stack through Debian's libpmix (built without frame pointers),
# which tests/asan.supp needs to name the PMIx function that made a leaked allocation.
UCOLL_SAN_ENVS="ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0"
UCOLL_SAN_ENVS="$UCOLL_SAN_ENVS:strict_string_checks=1:detect_stack_use_after_return=1"
UCOLL_SAN_ENVS="$UCOLL_SAN_ENVS UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"
UCOLL_SAN_ENVS="$UCOLL_SAN_ENVS LSAN_OPTIONS=suppressions=$UCOLL_SAN_DIR/asan.supp"
# The Check unit tests load no PMIx (nor UCX): ucoll's own frames have frame pointers, so the
# fast unwinder names every allocation there, and the slow one cost 3-4x their time (check_kernels
# 106 against 33 s, check_hier 40 against 10, 2026-12-07).
# shellcheck disable=SC2034  # used by tests/run-tests.sh
UCOLL_SAN_UNIT_ENVS=${UCOLL_SAN_ENVS/fast_unwind_on_malloc=0/fast_unwind_on_malloc=1}

# ThreadSanitizer (gcc's libtsan2 comes with gcc-12 on Debian 12): tests/mp/thread_test and
# progress_test's progress thread, the UCOLL_THREAD_MULTIPLE tests, with every rank's ucoll
# instrumented (UCX and PMIx are not).
# Any report ends the process with a non-zero status (halt_on_error); nothing is suppressed.
# UCX's memory hooks stay off: its madvise hook, called by glibc when a thread's stack is
# released, takes a UCM lock through TSan's interceptor before TSan has set the exiting thread
# up, and the process crashes in TSan (UCX 1.13, gcc 12). None of the transports used here
# needs the hooks (see above).
UCOLL_TSAN_CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer"
UCOLL_TSAN_LDFLAGS="-fsanitize=thread"
# shellcheck disable=SC2034  # used by tests/run-tests.sh
UCOLL_TSAN_ENVS="TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1"
UCOLL_TSAN_ENVS="$UCOLL_TSAN_ENVS UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none"

# shellcheck disable=SC2034  # used by tests/run-tests.sh
UCOLL_VALGRIND=(valgrind -q --tool=memcheck --error-exitcode=99 --leak-check=full
    --show-leak-kinds=definite --errors-for-leak-kinds=definite --num-callers=30
    --suppressions="$UCOLL_SAN_DIR/valgrind.supp")

# ucoll_san_build SRC DIR LOG: the ASan+UBSan build of the source tree SRC in DIR/obj, its check
# programs included; output to LOG. Reuses what an earlier call left in DIR (make rebuilds what
# changed). A source tree configured in place cannot host another build (configure refuses), so
# then the build is of a copy, DIR/src, of SRC's files known to git (tracked, or untracked and
# not ignored), less programs built in place (ELF files, libtool wrapper scripts): make would
# find those through VPATH and take them for up to date. An unpacked tarball (no git) is copied
# with `make distdir`: its distributed files.
ucoll_san_build() {
    ucoll_flavour_build "$1" "$2" "$3" "$UCOLL_SAN_CFLAGS" "$UCOLL_SAN_LDFLAGS"
}

# ucoll_tsan_build SRC DIR LOG: the ThreadSanitizer build of SRC in DIR/obj, as ucoll_san_build,
# of the library, tests/mp/thread_test and tests/mp/progress_test only
ucoll_tsan_build() {
    ucoll_flavour_build "$1" "$2" "$3" "$UCOLL_TSAN_CFLAGS" "$UCOLL_TSAN_LDFLAGS" \
        libucoll.la tests/mp/thread_test tests/mp/progress_test
}

# a build configured --without-pmix (no sanitizer): the library, mp_test and store_test only
ucoll_nopmix_build() {
    UCOLL_FLAVOUR_CONFIGURE="--without-pmix --enable-werror" \
        ucoll_flavour_build "$1" "$2" "$3" "-O2 -g" "" libucoll.la tests/mp/mp_test \
        tests/mp/store_test tests/mp/oob_test
}

# ucoll_flavour_build SRC DIR LOG CFLAGS LDFLAGS [TARGET...]: the build behind the ones above;
# without targets everything, check programs included
# ucoll_flavour_build SRC DIR LOG CFLAGS LDFLAGS [MAKE TARGETS...]: SRC built out of tree in
# DIR/obj (UCOLL_FLAVOUR_CONFIGURE: more configure arguments, words)
ucoll_flavour_build() {
    local src=$1 dir=$2 log=$3 cflags=$4 ldflags=$5
    shift 5
    local conf=${UCOLL_FLAVOUR_CONFIGURE:-}
    mkdir -p "$dir" || return 1
    (
        set -o pipefail
        if [ -f "$src/config.status" ]; then
            echo "+ $src is configured in place: building a copy of its files in $dir/src"
            if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" != "$(cd "$src" && pwd -P)" ]
            then
                # an unpacked tarball: its distributed files, as `make distdir` lists them
                echo "+ no git work tree: make -C $src distdir distdir=$dir/src"
                rm -rf "$dir/src"
                make -C "$src" distdir distdir="$dir/src" >/dev/null || exit 1
            else
                mkdir -p "$dir/src" &&
                    git -C "$src" ls-files -z --cached --others --exclude-standard |
                    while IFS= read -r -d '' f; do
                        [ -f "$src/$f" ] || continue
                        [ "$(head -c 4 "$src/$f" | tr -d '\0')" != $'\x7fELF' ] || continue
                        ! head -n 3 "$src/$f" | grep -q 'wrapper script for' || continue
                        printf '%s\0' "$f"
                    done |
                    tar -C "$src" --null -T - -cf - |
                    tar -C "$dir/src" -xpf - || exit 1
            fi
            src="$dir/src"
            if [ ! -x "$src/configure" ]; then
                echo "+ (cd $src && ./autogen.sh)"
                (cd "$src" && ./autogen.sh) || exit 1
            fi
        elif [ ! -x "$src/configure" ]; then
            echo "+ (cd $src && ./autogen.sh)"
            (cd "$src" && ./autogen.sh) || exit 1
        fi
        mkdir -p "$dir/obj" && cd "$dir/obj" || exit 1
        if [ ! -f Makefile ]; then
            echo "+ $src/configure $conf CFLAGS=\"$cflags\" LDFLAGS=\"$ldflags\""
            # shellcheck disable=SC2086  # $conf is a list of configure arguments
            "$src/configure" $conf CFLAGS="$cflags" LDFLAGS="$ldflags" || exit 1
        fi
        if [ $# -gt 0 ]; then
            echo "+ make -j2 $*"
            make -j2 "$@"
        else
            echo "+ make -j2 && make -j2 check TESTS= (build the check programs, run none)"
            make -j2 && make -j2 check TESTS=
        fi
    ) >"$log" 2>&1
}
