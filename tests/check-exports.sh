#!/bin/sh
# tests/check-exports.sh [LIBRARY]: fails unless LIBRARY (default: this build's libucoll.so,
# found through libucoll.la) exports nothing but ucoll_* symbols and contains no code of the
# symbolic executor (symbolic_*, exported or not), which belongs to the tools library only.
# NM may name the nm to use (make check passes configure's).
nm=${NM:-nm}
lib=$1
if [ -z "$lib" ]; then
    dlname=$(sed -n "s/^dlname='\(.*\)'$/\1/p" libucoll.la 2>/dev/null)
    if [ -z "$dlname" ]; then
        echo "FAIL: no libucoll.la with a shared library in $(pwd)"
        exit 1
    fi
    lib=.libs/$dlname
fi
if [ ! -f "$lib" ]; then
    echo "FAIL: $lib does not exist"
    exit 1
fi
rc=0
# Defined dynamic symbols. No exceptions are needed with this toolchain (gcc 12, GNU ld:
# _init/_fini are not exported); any name outside the public API is an error.
exported=$($nm -D --defined-only "$lib" | awk 'NF >= 2 { print $NF }') || exit 1
n=$(printf '%s\n' "$exported" | grep -c '^ucoll_')
others=$(printf '%s\n' "$exported" | grep -v '^ucoll_' | grep -v '^$')
echo "$lib: $n ucoll_* symbols exported"
if [ -n "$others" ]; then
    echo "FAIL: $lib exports symbols outside the public API:"
    printf '%s\n' "$others" | sed 's/^/  /'
    rc=1
fi
# the public API itself must be there (an empty symbol table must not pass)
for sym in ucoll_init ucoll_init_oob ucoll_init_store ucoll_finalize ucoll_exscan ucoll_allreduce ucoll_wait \
    ucoll_allgather ucoll_ireduce_scatter ucoll_alltoallv_init ucoll_scatterv; do
    printf '%s\n' "$exported" | grep -qx "$sym" || {
        echo "FAIL: $lib does not export $sym"
        rc=1
    }
done
# the full symbol table (the library is not stripped in the build tree)
all=$($nm "$lib" 2>&1)
if printf '%s\n' "$all" | grep -q 'no symbols'; then
    echo "FAIL: $lib has no symbol table (stripped?): cannot check for the symbolic executor"
    rc=1
fi
sym=$(printf '%s\n' "$all" | awk '{ print $NF }' | grep '^symbolic_')
if [ -n "$sym" ]; then
    echo "FAIL: $lib contains the symbolic executor:"
    printf '%s\n' "$sym" | sed 's/^/  /'
    rc=1
fi
[ "$rc" = 0 ] && echo "PASS: only ucoll_* exported, no symbolic_* inside"
exit "$rc"
