#!/usr/bin/env bash
# tests/slurm/slurm-down.sh DIR: stops the cluster that tests/slurm/slurm-up.sh DIR started.
# Cancels its jobs (the cluster is private to the tests, so every job in it is theirs), waits
# up to 15 s for them to end, then stops slurmd, slurmctld and munged by the process ids
# recorded in DIR/pids (TERM, and KILL after 10 s), each only if that pid still runs the
# program recorded for it. Exits 0 when nothing of the cluster is left running.
set -uo pipefail

if [ $# != 1 ] || [ ! -d "$1" ]; then
    echo "usage: tests/slurm/slurm-down.sh DIR" >&2
    exit 2
fi
DIR=$(cd "$1" && pwd) || exit 2
export SLURM_CONF="$DIR/slurm.conf"

die() {
    echo "slurm-down: error: $*" >&2
    exit 1
}
SAY="slurm-down: "
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

if live_pid slurmctld >/dev/null && [ -f "$SLURM_CONF" ]; then
    jobs=$(timeout 10 squeue -h -o %i 2>/dev/null | tr '\n' ' ')
    if [ -n "${jobs// /}" ]; then
        echo "slurm-down: cancelling jobs $jobs"
        # shellcheck disable=SC2086  # a list of job ids
        timeout 10 scancel $jobs 2>/dev/null
        for _ in $(seq 1 75); do
            [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
fi

status=0
for d in slurmd slurmctld munged; do
    stop_recorded "$d" || status=1
done
exit "$status"
