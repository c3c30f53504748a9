#!/usr/bin/env bash
# tests/cluster/cluster-exec.sh DIR HOST CMD...: runs CMD inside test host HOST (h1, h2, ...)
# of the cluster that cluster-up.sh DIR started: in its namespaces, with SLURM_CONF set to the
# cluster's configuration, in the current directory if the host sees it (else in /). Exits
# with CMD's status (127: no such host, or its anchor is gone).
set -u
if [ $# -lt 3 ]; then
    echo "usage: tests/cluster/cluster-exec.sh DIR HOST CMD..." >&2
    exit 2
fi
dir=$1 host=$2
shift 2
pid=$(cat "$dir/pids/$host.holder.pid" 2>/dev/null)
# the recorded pid must still be the host's anchor (ns-holder.sh HOST in a pid namespace of its
# own): a reused pid would put CMD into this machine's own namespaces
if ! [[ $pid =~ ^[0-9]+$ ]] ||
    ! tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q "ns-holder.sh $host " ||
    [ "$(readlink "/proc/$pid/ns/pid")" = "$(readlink /proc/self/ns/pid)" ]; then
    echo "cluster-exec: no host $host in $dir" >&2
    exit 127
fi
exec nsenter -t "$pid" -a env SLURM_CONF="$dir/slurm.conf" sh -c \
    'cd "$0" 2>/dev/null || cd /; exec "$@"' "$(pwd -P)" "$@"
