#!/bin/sh
# tests/mp/rankwrap.sh DIR PROGRAM [ARGS...]: runs one rank's program and records its exit status
# in DIR/rank-<rank>, so that the test driver knows every rank's fate even when the launcher
# misbehaves after the ranks exit. The rank comes from the launcher's environment (0 without).
# Its pid goes to DIR/wrapper-<rank> first: launchers put ranks in process groups of their own,
# so a rank that outlives a killed launcher is found through it (testlib.sh ucoll_launch).
dir=$1
shift
rank=${PMIX_RANK:-${OMPI_COMM_WORLD_RANK:-0}}
echo "$$" >"$dir/wrapper-$rank"
"$@"
rc=$?
echo "$rc" >"$dir/rank-$rank"
exit "$rc"
