#!/usr/bin/env bash
# tests/cluster/cluster-down.sh DIR: stops the cluster that cluster-up.sh DIR started, also
# one whose start failed half way. Cancels its jobs, stops the slurmds, slurmctld and munged by
# their recorded process ids (TERM, KILL after 10 s), then ends each host's namespaces by
# ending their holder, process 1 of the host's pid namespace, which ends every process left in
# the host; the links die with their namespaces. Exits 0 when nothing of it is left.
set -uo pipefail
if [ $# != 1 ] || [ ! -d "$1" ]; then
    echo "usage: tests/cluster/cluster-down.sh DIR" >&2
    exit 2
fi
DIR=$(cd "$1" && pwd -P) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd)
die() {
    echo "cluster-down: error: $*" >&2
    exit 1
}
SAY="cluster-down: "
# shellcheck source=../slurm/lib.sh
. "$HERE/../slurm/lib.sh"

# a daemon runs as the only child of the nsenter recorded in DIR/pids/FILE.nsenter.pid; stops
# it (TERM, KILL after 10 s), after which nsenter ends too
stop_daemon() {
    local file=$1 comm=$2 npid dpid
    npid=$(live_pid "$file.nsenter" nsenter) || {
        rm -f "$DIR/pids/$file.nsenter.pid"
        return 0
    }
    dpid=$(pgrep -P "$npid" | head -n 1)
    if [ -n "$dpid" ]; then
        echo "$dpid" >"$DIR/pids/$file.pid"
        stop_recorded "$file" "$comm" || return 1
    fi
    for _ in $(seq 1 50); do
        live_pid "$file.nsenter" nsenter >/dev/null || break
        sleep 0.1
    done
    npid=$(live_pid "$file.nsenter" nsenter) && kill -KILL "$npid" 2>/dev/null
    rm -f "$DIR/pids/$file.nsenter.pid"
}

# the pid in DIR/pids/NAME.holder.pid if it is still that host's anchor: ns-holder.sh NAME, in
# a pid namespace other than this one's (a reused pid is left alone)
holder_pid() {
    local pid
    pid=$(cat "$DIR/pids/$1.holder.pid" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q "ns-holder.sh $1 " || return 1
    [ "$(readlink "/proc/$pid/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] || return 1
    echo "$pid"
}

if live_pid slurmctld.nsenter nsenter >/dev/null; then
    jobs=$(timeout 10 "$HERE/cluster-exec.sh" "$DIR" h1 squeue -h -o %i 2>/dev/null | tr '\n' ' ')
    if [ -n "${jobs// /}" ]; then
        echo "cluster-down: cancelling jobs $jobs"
        # shellcheck disable=SC2086  # a list of job ids
        timeout 10 "$HERE/cluster-exec.sh" "$DIR" h1 scancel $jobs 2>/dev/null
        for _ in $(seq 1 75); do
            [ -z "$(timeout 5 "$HERE/cluster-exec.sh" "$DIR" h1 squeue -h -o %i 2>/dev/null)" ] &&
                break
            sleep 0.2
        done
    fi
fi
status=0
for f in "$DIR"/pids/slurmd.*.nsenter.pid; do
    [ -e "$f" ] || continue
    f=${f##*/}
    stop_daemon "${f%.nsenter.pid}" slurmd || status=1
done
stop_daemon slurmctld slurmctld || status=1
stop_recorded munged || status=1
# the holders: hosts first, the switch last
for f in "$DIR"/pids/h*.holder.pid "$DIR"/pids/switch.holder.pid; do
    [ -e "$f" ] || continue
    name=${f##*/}
    name=${name%.holder.pid}
    pid=$(holder_pid "$name") || {
        rm -f "$f"
        continue
    }
    kill -KILL "$pid" 2>/dev/null
    for _ in $(seq 1 50); do
        holder_pid "$name" >/dev/null || break
        sleep 0.1
    done
    if holder_pid "$name" >/dev/null; then
        echo "cluster-down: error: $name (holder pid $pid) does not stop" >&2
        status=1
    else
        echo "cluster-down: $name stopped (holder pid $pid)"
        rm -f "$f"
    fi
done
exit "$status"
