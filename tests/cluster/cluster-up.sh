#!/usr/bin/env bash
# tests/cluster/cluster-up.sh [--no-install] DIR [H]: a Slurm cluster of H test hosts (default
# 4, at most 16) on this machine, as root. Each host h1..hH is a set of namespaces of its own
# (network, host name, process ids, IPC, mounts with a private /tmp and /dev/shm), anchored by
# tests/cluster/ns-holder.sh, with one network device eth0 at 198.18.0.(10+i)/24. A "switch"
# network namespace holds the bridge that joins them. These addresses exist only inside the
# namespaces: nothing is routed to or from this machine's own network.
#
# One munged (its own key and socket, under DIR) serves them all; slurmctld runs on h1, one
# slurmd on each host (NodeName=hI, NodeAddr its address, MpiDefault=pmix). Every file,
# configuration and log is under DIR; /etc is neither read for Slurm nor changed. Each host has
# a /tmp of its own, in which DIR and this source tree stay visible where they are.
#
# Commands run on a host through tests/cluster/cluster-exec.sh DIR hI CMD... (srun from h1).
# On success the nodes are idle and a job of one task per host has printed every host's name.
# tests/cluster/cluster-down.sh DIR stops it all, also after a failed start; this script runs
# it on failure (after showing the logs' tails) and before starting over in a used DIR.
set -uo pipefail

install=1
if [ "${1:-}" = --no-install ]; then
    install=0
    shift
fi
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ -z "$1" ]; then
    echo "usage: tests/cluster/cluster-up.sh [--no-install] DIR [HOSTS]" >&2
    exit 2
fi
H=${2:-4}
if ! [[ $H =~ ^[1-9][0-9]*$ ]] || [ "$H" -gt 16 ]; then
    echo "cluster-up: error: HOSTS must be 1..16, not '$H'" >&2
    exit 2
fi
mkdir -p "$1" || exit 1
DIR=$(cd "$1" && pwd -P) || exit 1
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd -P)
say() { echo "cluster-up: $*"; }
die() {
    echo "cluster-up: error: $*" >&2
    local f
    for f in "$DIR"/log/*; do
        [ -s "$f" ] || continue
        echo "---- last lines of $f:" >&2
        tail -n 10 "$f" >&2
    done
    "$HERE/cluster-down.sh" "$DIR" >&2
    exit 1
}
if [ "$(id -u)" != 0 ]; then
    echo "cluster-up: error: must run as root (namespaces, links, slurmd)" >&2
    exit 1
fi
for c in unshare nsenter ip pgrep; do
    command -v "$c" >/dev/null 2>&1 || die "$c not found"
done

SAY="cluster-up: "
# shellcheck source=../slurm/lib.sh
. "$HERE/../slurm/lib.sh"
slurm_packages "$install"

if [ -d "$DIR/pids" ] && [ -n "$(ls -A "$DIR/pids" 2>/dev/null)" ]; then
    say "stopping the cluster left in $DIR"
    "$HERE/cluster-down.sh" "$DIR"
fi
rm -rf "$DIR/munge" "$DIR/munge-run" "$DIR/spool" "$DIR/log" "$DIR/pids" "$DIR/run" \
    "$DIR/slurm.conf" "$DIR/hosts"
mkdir -p "$DIR/spool/ctld" "$DIR/log" "$DIR/pids" "$DIR/run" || die "cannot create under $DIR"
for i in $(seq 1 "$H"); do
    mkdir -p "$DIR/spool/h$i" || die "cannot create $DIR/spool/h$i"
done

start_munged
say "munged up (pid $(cat "$DIR/pids/munged.pid"))"

# ---------------------------------------------------------------- namespaces
# starts ns-holder.sh NAME under unshare with the given flags; records the holder's pid (the
# process inside the namespaces, a child of unshare) in DIR/pids/NAME.holder.pid. A holder that
# does not come up is killed here: nothing else knows of it yet.
start_holder() {
    local name=$1 ready="$DIR/run/$1.ready" upid hpid=""
    shift
    rm -f "$ready"
    setsid unshare "$@" bash "$HERE/ns-holder.sh" "$name" "$ready" "$DIR" "$TOP" </dev/null \
        >>"$DIR/log/holder-$name.log" 2>&1 &
    upid=$!
    for _ in $(seq 1 100); do
        [ -f "$ready" ] && hpid=$(pgrep -P "$upid" | head -n 1) && [ -n "$hpid" ] && break
        hpid=""
        kill -0 "$upid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$hpid" ]; then
        pkill -KILL -P "$upid" 2>/dev/null
        kill -KILL "$upid" 2>/dev/null
        die "the namespaces of $name did not come up in 10 s"
    fi
    echo "$hpid" >"$DIR/pids/$name.holder.pid"
}
start_holder switch --net --pid --fork
nsenter -t "$(cat "$DIR/pids/switch.holder.pid")" --net sh -c \
    'ip link add br0 type bridge && ip link set br0 up' || die "cannot make the bridge"
hostlines=""
for i in $(seq 1 "$H"); do
    start_holder "h$i" --net --uts --ipc --mount --pid --fork --mount-proc
    hp=$(cat "$DIR/pids/h$i.holder.pid")
    sp=$(cat "$DIR/pids/switch.holder.pid")
    # made here under names unlikely to be taken, then moved: the host's end becomes eth0
    a="ucoll$$h$i" b="ucoll$$s$i"
    ip link add "$a" type veth peer name "$b" || die "cannot make the link of h$i"
    if ! ip link set "$a" netns "$hp" || ! ip link set "$b" netns "$sp"; then
        ip link del "$a" 2>/dev/null
        die "cannot move the link of h$i into its namespaces"
    fi
    addr=198.18.0.$((10 + i))
    nsenter -t "$hp" --net sh -c "ip link set '$a' name eth0 && ip addr add $addr/24 dev eth0 &&
        ip link set eth0 up" || die "cannot set up eth0 of h$i"
    nsenter -t "$sp" --net sh -c "ip link set '$b' name port$i && ip link set port$i master br0 &&
        ip link set port$i up" || die "cannot attach h$i to the bridge"
    hostlines="${hostlines}h$i $addr $hp
"
done
printf '%s' "$hostlines" >"$DIR/hosts"
say "$H hosts up (name address holder-pid in $DIR/hosts)"

# ---------------------------------------------------------------- slurm
nodes=""
for i in $(seq 1 "$H"); do
    nodes="${nodes}NodeName=h$i NodeAddr=198.18.0.$((10 + i)) CPUs=8 RealMemory=1000 State=UNKNOWN
"
done
cat >"$DIR/slurm.conf" <<EOF
# a cluster of $H namespace hosts for ucoll's tests, written by tests/cluster/cluster-up.sh
ClusterName=ucollns
SlurmctldHost=h1(198.18.0.11)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK
StateSaveLocation=$DIR/spool/ctld
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.%n.log
$(slurm_conf_policy)
SlurmdTimeout=10
$nodes
PartitionName=debug Nodes=h[1-$H] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$DIR/slurm.conf"

# runs a daemon inside host hI's namespaces; records nsenter's pid (the daemon is its only
# child: see stop_daemon in cluster-down.sh) in DIR/pids/FILE.nsenter.pid
start_daemon() {
    local host=$1 file=$2 npid
    shift 2
    setsid nsenter -t "$(cat "$DIR/pids/$host.holder.pid")" -a env SLURM_CONF="$SLURM_CONF" \
        "$@" </dev/null >>"$DIR/log/$file.stdout" 2>&1 &
    npid=$!
    echo "$npid" >"$DIR/pids/$file.nsenter.pid"
}
# 0 while FILE's daemon runs
daemon_alive() {
    local npid
    npid=$(live_pid "$1.nsenter" nsenter) && [ -n "$(pgrep -P "$npid")" ]
}
start_daemon h1 slurmctld slurmctld -D -f "$SLURM_CONF"
ok=0
for _ in $(seq 1 100); do
    if "$HERE/cluster-exec.sh" "$DIR" h1 scontrol ping 2>/dev/null | grep -q 'is UP'; then
        ok=1
        break
    fi
    daemon_alive slurmctld || break
    sleep 0.2
done
daemon_alive slurmctld || die "slurmctld exited"
[ "$ok" = 1 ] || die "slurmctld did not answer (scontrol ping) in 20 s"
say "slurmctld up on h1"
for i in $(seq 1 "$H"); do
    start_daemon "h$i" "slurmd.h$i" slurmd -D -N "h$i" -f "$SLURM_CONF"
done
idle=0
for _ in $(seq 1 150); do
    idle=$("$HERE/cluster-exec.sh" "$DIR" h1 sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$')
    [ "$idle" -lt "$H" ] || break
    sleep 0.2
done
[ "$idle" -ge "$H" ] || die "only $idle of $H nodes idle after 30 s"
say "slurmd up on $H hosts, all idle"

if ! out=$(timeout -k 5 60 "$HERE/cluster-exec.sh" "$DIR" h1 srun --mpi=none --immediate=30 \
    -N "$H" -n "$H" hostname 2>&1); then
    die "a job of one task per host did not run: $out"
fi
want=$(seq 1 "$H" | sed 's/^/h/' | sort | tr '\n' ' ')
got=$(echo "$out" | sort | tr '\n' ' ')
[ "$got" = "$want" ] || die "the job ran on '$got', not on '$want'"
say "cluster ready: $H hosts, a job on each ran; run commands with" \
    "tests/cluster/cluster-exec.sh $DIR h1 CMD..."
exit 0
