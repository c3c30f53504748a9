#!/usr/bin/env bash
# tests/python_install.sh: installs python/ the way README says (a venv over the system's
# Python and its Debian numpy, pip with no build isolation and no index, so nothing is
# downloaded), then imports ucoll from the venv, away from the source tree, and runs a 1-rank
# allreduce through the build tree's libucoll.so (UCOLL_LIBRARY). Exit status 0 on success.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
work=$(mktemp -d /tmp/ucoll-pyinstall.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$top/python" "$work/src" # pip builds in the source directory: keep the tree clean
rm -rf "$work/src/build" "$work/src"/*.egg-info
"$py" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --no-build-isolation --no-index "$work/src"
cd "$work"
UCOLL_LIBRARY="$top/.libs/libucoll.so" "$work/venv/bin/python" - "$work/venv" <<'PY'
import sys
import numpy as np
import ucoll
assert ucoll.__file__.startswith(sys.argv[1]), ucoll.__file__
w = ucoll.init()
a = np.arange(4, dtype=np.int32)
b = np.zeros(4, dtype=np.int32)
w.Allreduce(a, b)
assert w.size == 1 and list(b) == [0, 1, 2, 3], (w.size, b)
ucoll.finalize()
print("verdict: installed into a venv, imported from", ucoll.__file__)
PY
