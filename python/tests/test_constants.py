"""The Python constants against include/ucoll.h's values, printed by a C program compiled from
the header (no library and no job needed)."""
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

NAMES = {
    "OK": "UCOLL_OK", "INPROGRESS": "UCOLL_INPROGRESS",
    **{e: "UCOLL_" + e for e in ["ERR_INVALID_ARG", "ERR_NO_MEMORY", "ERR_NOT_SUPPORTED",
                                 "ERR_BOOTSTRAP", "ERR_TRANSPORT", "ERR_PEER_FAILED",
                                 "ERR_TIMED_OUT", "ERR_TRUNCATED", "ERR_STATE",
                                 "ERR_MISMATCH"]},
    **{d: "UCOLL_" + d for d in ["INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64",
                                 "UINT64", "FLOAT32", "FLOAT64", "FLOAT16", "BFLOAT16"]},
    **{o: "UCOLL_OP_" + o for o in ["SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND",
                                    "BOR", "BXOR", "AVG"]},
}
COLLS = ["exscan", "scan", "reduce", "allreduce", "bcast", "barrier", "allgather", "allgatherv",
         "reduce_scatter_block", "reduce_scatter", "alltoall", "alltoallv", "gather", "gatherv",
         "scatter", "scatterv"]


@pytest.fixture(scope="module")
def header_values(tmp_path_factory):
    d = tmp_path_factory.mktemp("consts")
    entries = list(NAMES.items()) + [("coll:" + c, "UCOLL_COLL_" + c.upper()) for c in COLLS]
    src = ["#include <stdio.h>", "#include <ucoll.h>", "int main(void) {"]
    src += ['printf("%%s %%ld\\n", "%s", (long)%s);' % (k, v) for k, v in entries]
    src += ['printf("IN_PLACE %lu\\n", (unsigned long)UCOLL_IN_PLACE);', "return 0; }"]
    (d / "c.c").write_text("\n".join(src) + "\n")
    subprocess.run([os.environ.get("CC", "cc"), "-I", os.path.join(TOP, "include"), "-o",
                    str(d / "c"), str(d / "c.c")], check=True)
    out = subprocess.run([str(d / "c")], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_enums_match_header(header_values):
    import ucoll
    for name in NAMES:
        assert getattr(ucoll, name) == header_values[name], name
    for c in COLLS:
        assert ucoll.COLL[c] == header_values["coll:" + c], c
    assert len(ucoll.COLL) == len(COLLS)


def test_in_place_pointer(header_values):
    import ucoll
    assert ucoll._IN_PLACE_PTR.value == header_values["IN_PLACE"]


def test_dtype_map():
    import numpy as np
    import ucoll
    want = {np.int8: ucoll.INT8, np.uint8: ucoll.UINT8, np.int16: ucoll.INT16,
            np.uint16: ucoll.UINT16, np.int32: ucoll.INT32, np.uint32: ucoll.UINT32,
            np.int64: ucoll.INT64, np.uint64: ucoll.UINT64, np.float32: ucoll.FLOAT32,
            np.float64: ucoll.FLOAT64, np.float16: ucoll.FLOAT16}
    for t, code in want.items():
        assert ucoll.dtype_of(np.zeros(1, t)) == code
    for bad in [np.bool_, np.complex128, np.longdouble, np.dtype(">i4"), object]:
        with pytest.raises(TypeError, match="unsupported dtype"):
            ucoll.dtype_of(np.zeros(1, bad))
