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
    local src=$1 dir=$2 log=$3
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
            echo "+ $src/configure CFLAGS=\"$UCOLL_SAN_CFLAGS\" LDFLAGS=\"$UCOLL_SAN_LDFLAGS\""
            "$src/configure" CFLAGS="$UCOLL_SAN_CFLAGS" LDFLAGS="$UCOLL_SAN_LDFLAGS" || exit 1
        fi
        echo "+ make -j2 && make -j2 check TESTS= (build the check programs, run none)"
        make -j2 && make -j2 check TESTS=
    ) >"$log" 2>&1
}
