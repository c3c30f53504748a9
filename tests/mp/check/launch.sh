#!/usr/bin/env bash
# tests/mp/check/launch.sh CASE: make check's launcher wrapper (MP_LOG_COMPILER) for the .mp
# files. CASE holds one line "NP SECONDS PROGRAM [ARGS...]" (lines starting with # are
# comments). PROGRAM, a path in the build tree, runs on NP ranks under the launcher configure
# found ($MPIRUN; NP "none": one process without a launcher) through tests/testlib.sh's
# ucoll_launch: the local environment of ucoll_local_env, `timeout -k 5 SECONDS` in a process
# group of its own, every rank's exit status recorded. The job passes only if each of the NP
# ranks exited with status 0; the job size itself is asserted by the program (the case gives
# mp_test --expect-size NP, oob_test --ranks N). Exit status: 0 pass, 1 fail, 77 skip (no
# launcher), 99 a malformed case.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/testlib.sh
. "$here/../../testlib.sh"

case_file=${1:?usage: launch.sh CASE}
line=$(grep -v -E '^[[:space:]]*(#|$)' "$case_file" | head -n 1)
read -r np secs prog args <<<"$line"
if [ -z "${prog:-}" ] || ! [[ $secs =~ ^[0-9]+$ ]] || ! [[ $np =~ ^([0-9]+|none)$ ]]; then
    echo "launch.sh: $case_file: expected \"NP SECONDS PROGRAM [ARGS...]\", got \"$line\""
    exit 99
fi
if [ "$np" != none ]; then
    if [ -z "${MPIRUN:-}" ]; then
        echo "launch.sh: no launcher (configure found no mpirun): $case_file skipped"
        exit 77
    fi
    export UCOLL_MPIRUN=$MPIRUN
fi
if [ ! -x "$prog" ]; then
    echo "launch.sh: $prog is not built (run from the top of the build tree)"
    exit 99
fi

ucoll_local_env
export UCOLL_TIMEOUT="${UCOLL_TIMEOUT:-120}" # a hung collective becomes an error, not a hang
log=$(mktemp /tmp/ucoll-check.XXXXXX)
# shellcheck disable=SC2086  # the case's arguments are words
ucoll_launch "$np" "$secs" "$log" "$prog" $args
rc=$?
cat "$log"
rm -f "$log"
what="$np ranks, every one"
[ "$np" != none ] || what="1 process (no launcher), it"
if [ "$rc" = 0 ]; then
    echo "launch.sh: PASS: $what exited with 0${LAUNCH_NOTE:+ ($LAUNCH_NOTE)}"
    exit 0
fi
echo "launch.sh: FAIL: $LAUNCH_NOTE"
exit 1
