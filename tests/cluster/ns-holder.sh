#!/usr/bin/env bash
# tests/cluster/ns-holder.sh NAME READY: the first process of one test host's namespaces,
# started by cluster-up.sh under `unshare --net --uts --ipc --mount --pid --fork --mount-proc`
# (or `unshare --net --fork` for the switch, NAME "switch"). It gives the host its name, a
# private /tmp and /dev/shm and a loopback that is up, writes READY, and then stays as the
# namespaces' anchor: as process 1 of the host's pid namespace it reaps orphaned processes, and
# when it ends the kernel ends every process of the host.
set -u
name=$1 ready=$2
if [ "$name" != switch ]; then
    hostname "$name" || exit 1
    mount -t tmpfs -o mode=1777 "tmpfs-$name" /tmp || exit 1
    mount -t tmpfs -o mode=1777 "shm-$name" /dev/shm || exit 1
fi
ip link set lo up || exit 1
echo ok >"$ready"
trap 'exit 0' TERM INT
# bash reaps every child that reaches it, also processes whose parents died
while :; do
    sleep 3600 &
    wait $! 2>/dev/null
done
