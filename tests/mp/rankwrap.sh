#!/bin/sh
# tests/mp/rankwrap.sh DIR PROGRAM [ARGS...]: runs one rank's program and records its exit status
# in DIR/rank-<rank>, so that the test driver knows every rank's fate even when the launcher
# misbehaves after the ranks exit. The rank comes from the launcher's environment (0 without).
dir=$1
shift
"$@"
rc=$?
echo "$rc" >"$dir/rank-${PMIX_RANK:-${OMPI_COMM_WORLD_RANK:-0}}"
exit "$rc"
