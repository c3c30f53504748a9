#!/bin/sh
# tests/mp/other_pidns.sh PROGRAM ARGS...: runs odd ranks (mpirun's OMPI_COMM_WORLD_RANK) in a
# pid namespace of their own (unshare --pid --fork, root only), like containers on one node that
# the launcher counts as one host: their process ids mean nothing to the even ranks, and their
# on-host segments cannot be opened through /proc. Even ranks run PROGRAM as is.
rank=${OMPI_COMM_WORLD_RANK:-0}
if [ $((rank % 2)) = 1 ]; then
    exec unshare --pid --fork "$@"
fi
exec "$@"
