#!/usr/bin/env bash
# tests/cluster/cluster-exec.sh DIR HOST CMD...: runs CMD inside test host HOST (h1, h2, ...)
# of the cluster that cluster-up.sh DIR started: in its namespaces, with SLURM_CONF set to the
# cluster's configuration, in the current directory. Exits with CMD's status (127: no such host).
set -u
if [ $# -lt 3 ]; then
    echo "usage: tests/cluster/cluster-exec.sh DIR HOST CMD..." >&2
    exit 2
fi
dir=$1 host=$2
shift 2
pid=$(cat "$dir/pids/$host.holder.pid" 2>/dev/null) || {
    echo "cluster-exec: no host $host in $dir" >&2
    exit 127
}
exec nsenter -t "$pid" -a --wd="$PWD" env SLURM_CONF="$dir/slurm.conf" "$@"
