#!/usr/bin/env bash
# tests/cluster/ns-holder.sh NAME READY [KEEP...]: the first process of one test host's
# namespaces, started by cluster-up.sh under
# `unshare --net --uts --ipc --mount --pid --fork --mount-proc` (or `unshare --net --pid --fork`
# for the switch, NAME "switch"). It gives the host its name, a private /tmp and /dev/shm (in
# which each KEEP directory under /tmp, such as the cluster's state and the source tree, stays
# visible: it is bound back into the new /tmp) and a loopback that is up, and writes READY.
# Then it stays as the namespaces' anchor: as process 1 of their pid namespace it reaps
# orphaned processes, and when it ends the kernel ends every process left there.
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
