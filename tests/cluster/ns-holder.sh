#!/usr/bin/env bash
# tests/cluster/ns-holder.sh NAME READY [KEEP...]: the first process of one test host's namespaces,
# started by cluster-up.sh under `unshare --net --uts --ipc --mount --pid --fork --mount-proc`
# (or `unshare --net --fork` for the switch, NAME "switch"). It gives the host its name, a
# private /tmp and /dev/shm and a loopback that is up, writes READY, and then stays as the
# (each KEEP directory under /tmp, such as the cluster's state and the source tree, stays
# visible there: it is bound back into the new /tmp)
# namespaces' anchor: as process 1 of the host's pid namespace it reaps orphaned processes, and
# when it ends the kernel ends every process of the host.
set -u
name=$1 ready=$2
shift 2
if [ "$name" != switch ]; then
    hostname "$name" || exit 1
    # the machine's /tmp stays reachable at /mnt (this mount namespace's own) while the KEEP
    # directories are bound from it into the host's fresh /tmp
    mount --bind /tmp /mnt || exit 1
    mount -t tmpfs -o mode=1777 "tmpfs-$name" /tmp || exit 1
    for keep in "$@"; do
        case $keep in
        /tmp/*)
            mkdir -p "$keep" && mount --bind "/mnt/${keep#/tmp/}" "$keep" || exit 1
            ;;
        esac
    done
    umount -l /mnt || exit 1
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
