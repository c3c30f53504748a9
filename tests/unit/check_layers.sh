#!/bin/sh
# tests/unit/check_layers.sh: the include graph keeps its layers. Fails if a file of src/ includes
# a UCX header or the transport's private headers (shm.h, op.h), if ucx_transport/ or bootstrap/
# include anything of src/, or if ucx_transport/ and bootstrap/ include each other.
top=${srcdir:-.}
bad=0
complain() {
    echo "check_layers: $1:"
    echo "$2" | sed 's/^/    /'
    bad=1
}
hits=$(grep -nE '#include *[<"](ucp|uct|ucs)/' "$top"/src/*.[ch] "$top"/src/alg/*.[ch])
[ -z "$hits" ] || complain "src/ includes a UCX header" "$hits"
hits=$(grep -nE '#include *".*ucx_transport/(shm|op)\.h"' "$top"/src/*.[ch] "$top"/src/alg/*.[ch])
[ -z "$hits" ] || complain "src/ includes the transport's private headers" "$hits"
hits=$(grep -nE '#include *"(\.\./)?(src/|sched\.h|ucoll_int\.h|alg/|dtype\.h)' \
    "$top"/ucx_transport/*.[ch] "$top"/bootstrap/*.[ch])
[ -z "$hits" ] || complain "ucx_transport/ or bootstrap/ includes src/" "$hits"
hits=$(grep -nE '#include *".*bootstrap' "$top"/ucx_transport/*.[ch])
[ -z "$hits" ] || complain "ucx_transport/ includes bootstrap/" "$hits"
hits=$(grep -nE '#include *".*ucx_transport' "$top"/bootstrap/*.[ch])
[ -z "$hits" ] || complain "bootstrap/ includes ucx_transport/" "$hits"
[ "$bad" = 0 ] && echo "check_layers: src/ -> {ucx_transport/transport.h, bootstrap/} only; no UCX header in src/"
exit "$bad"
