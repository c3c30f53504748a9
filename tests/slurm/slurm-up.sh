#!/usr/bin/env bash
# tests/slurm/slurm-up.sh [--no-install] DIR: starts a private single-node Slurm cluster for the
# tests (as root): a munged with its own key and socket, slurmctld and slurmd, all of it under
# DIR, on this host only, with MpiDefault=pmix. Nothing under /etc is read or changed: the
# cluster's configuration is DIR/slurm.conf, and commands reach it through SLURM_CONF.
#
# On success (exit 0) the node is idle and a 1-task job has run; DIR/slurm.env holds the line
#   export SLURM_CONF=DIR/slurm.conf
# to source, and DIR/pids/{munged,slurmctld,slurmd}.pid the daemons' process ids, by which
# tests/slurm/slurm-down.sh DIR stops them. On failure it says why on stderr, shows the tail
# of the daemon logs, stops whatever it started, and exits non-zero.
#
# The node claims CPUs=UCOLL_SLURM_CPUS (default: 32, or the real count if larger) with
# SlurmdParameters=config_overrides, and jobs are meant to be run with `srun --overcommit`, so
# that more ranks than cores can run on a small machine. Ports: the first free pair from
# UCOLL_SLURM_PORT (default 16817) on, so that a system Slurm on 6817/6818 is left alone.
#
# Debian 12 packages: slurmctld slurmd slurm-client munge, and libpmix-dev: Slurm's pmix plugin
# (slurm-wlm-basic-plugins: mpi_pmix_v4.so) dlopens .../pmix2/lib/libpmix.so, which only the
# -dev package provides. They are installed when missing, unless --no-install is given.
set -uo pipefail

install=1
if [ "${1:-}" = --no-install ]; then
    install=0
    shift
fi
if [ $# != 1 ] || [ -z "$1" ]; then
    echo "usage: tests/slurm/slurm-up.sh [--no-install] DIR" >&2
    exit 2
fi
mkdir -p "$1" || exit 1
DIR=$(cd "$1" && pwd) || exit 1
HERE=$(cd "$(dirname "$0")" && pwd)

say() { echo "slurm-up: $*"; }
die() {
    echo "slurm-up: error: $*" >&2
    local f
    for f in "$DIR"/log/munged.log "$DIR"/log/slurmctld.log "$DIR"/log/slurmctld.stdout \
        "$DIR"/log/slurmd.log "$DIR"/log/slurmd.stdout; do
        [ -s "$f" ] || continue
        echo "---- last lines of $f:" >&2
        tail -n 15 "$f" >&2
    done
    "$HERE/slurm-down.sh" "$DIR" >&2
    exit 1
}

if [ "$(id -u)" != 0 ]; then
    echo "slurm-up: error: must run as root (slurmd starts jobs as any user)" >&2
    exit 1
fi

# ---------------------------------------------------------------- packages
SAY="slurm-up: "
# shellcheck source=lib.sh
. "$HERE/lib.sh"
slurm_packages "$install"

# ---------------------------------------------------------------- a fresh state directory
if [ -d "$DIR/pids" ] && [ -n "$(ls -A "$DIR/pids" 2>/dev/null)" ]; then
    say "stopping the cluster left in $DIR"
    "$HERE/slurm-down.sh" "$DIR"
fi
rm -rf "$DIR/munge" "$DIR/munge-run" "$DIR/spool" "$DIR/log" "$DIR/pids" "$DIR/slurm.conf" \
    "$DIR/slurm.env"
if ! mkdir -p "$DIR/spool/ctld" "$DIR/spool/d" "$DIR/log" "$DIR/pids"; then
    die "cannot create directories under $DIR"
fi

# ---------------------------------------------------------------- munge
start_munged
SOCK=$MUNGE_SOCK
say "munged up (pid $(cat "$DIR/pids/munged.pid"))"

# ---------------------------------------------------------------- slurm.conf
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=${UCOLL_SLURM_PORT:-16817}
[[ $port =~ ^[1-9][0-9]*$ ]] || die "UCOLL_SLURM_PORT=$port is no port number"
while ! port_free "$port" || ! port_free $((port + 1)); do
    port=$((port + 2))
    [ "$port" -lt 65000 ] || die "no free pair of TCP ports found"
done
HOST=$(hostname -s)
cpus=${UCOLL_SLURM_CPUS:-32}
[[ $cpus =~ ^[1-9][0-9]*$ ]] || die "UCOLL_SLURM_CPUS=$cpus is no number of CPUs"
[ "$(nproc)" -le "$cpus" ] || cpus=$(nproc)
cat >"$DIR/slurm.conf" <<EOF
# a private single-node cluster for ucoll's tests, written by tests/slurm/slurm-up.sh
ClusterName=ucolltest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$DIR/spool/ctld
SlurmdSpoolDir=$DIR/spool/d
SlurmctldPidFile=$DIR/spool/slurmctld.pid
SlurmdPidFile=$DIR/spool/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
$(slurm_conf_policy)
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$DIR/slurm.conf"
echo "export SLURM_CONF=$SLURM_CONF" >"$DIR/slurm.env"

# ---------------------------------------------------------------- slurmctld, slurmd
setsid slurmctld -D -f "$SLURM_CONF" </dev/null >>"$DIR/log/slurmctld.stdout" 2>&1 &
echo $! >"$DIR/pids/slurmctld.pid"
ok=0
for _ in $(seq 1 100); do
    if scontrol ping 2>/dev/null | grep -q 'is UP'; then
        ok=1
        break
    fi
    kill -0 "$(cat "$DIR/pids/slurmctld.pid")" 2>/dev/null || break
    sleep 0.2
done
kill -0 "$(cat "$DIR/pids/slurmctld.pid")" 2>/dev/null || die "slurmctld exited"
[ "$ok" = 1 ] || die "slurmctld did not answer (scontrol ping) in 20 s"
say "slurmctld up (pid $(cat "$DIR/pids/slurmctld.pid"), port $port)"

setsid slurmd -D -N "$HOST" -f "$SLURM_CONF" </dev/null >>"$DIR/log/slurmd.stdout" 2>&1 &
echo $! >"$DIR/pids/slurmd.pid"
state=""
for _ in $(seq 1 150); do
    state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null)
    [ "$state" != idle ] || break
    kill -0 "$(cat "$DIR/pids/slurmd.pid")" 2>/dev/null || break
    sleep 0.2
done
kill -0 "$(cat "$DIR/pids/slurmd.pid")" 2>/dev/null || die "slurmd exited"
[ "$state" = idle ] || die "node $HOST is not idle after 30 s (state: ${state:-none})"
say "slurmd up (pid $(cat "$DIR/pids/slurmd.pid")), node $HOST idle with $cpus CPUs"

# ---------------------------------------------------------------- a first job, and pmix
if ! out=$(timeout -k 5 60 srun --mpi=none --immediate=30 -n 1 true 2>&1); then
    die "a 1-task job did not run: $out"
fi
if ! srun --mpi=list 2>&1 | grep -q pmix; then
    die "srun offers no pmix plugin (srun --mpi=list: $(srun --mpi=list 2>&1 | tr '\n' ' '))"
fi
plugin=$(srun --mpi=list 2>&1 | grep -o 'pmix_v[0-9]*' | head -n 1)
say "cluster ready: $(srun --version 2>/dev/null), MpiDefault=pmix (${plugin:-pmix}), libpmix" \
    "$(dpkg-query -W -f='${Version}' libpmix2 2>/dev/null || echo '?'); export SLURM_CONF=$SLURM_CONF"
exit 0
