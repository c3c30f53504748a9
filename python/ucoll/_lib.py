"""Finding and loading libucoll.so, and the C prototypes of include/ucoll.h."""
import ctypes
import ctypes.util
import os

_c_comm_p = ctypes.c_void_p
_c_req_p = ctypes.c_void_p
_vp = ctypes.c_void_p
_sz = ctypes.c_size_t
_szp = ctypes.POINTER(ctypes.c_size_t)
_int = ctypes.c_int
_out = ctypes.POINTER(ctypes.c_void_p)


def _candidates():
    env = os.environ.get("UCOLL_LIBRARY")
    if env:
        return [env]  # an explicit choice: no fallback that could load another build
    here = os.path.dirname(os.path.abspath(__file__))
    # run from the source tree: python/ucoll/ -> the build tree's .libs at the top
    out = [os.path.join(here, "..", "..", ".libs", "libucoll.so")]
    found = ctypes.util.find_library("ucoll")
    if found:
        out.append(found)
    out.append("libucoll.so.0")
    return out


def load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append(path + ": no such file")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
    raise ImportError("ucoll: libucoll.so not found (set UCOLL_LIBRARY to its path): " +
                      "; ".join(errors))


# name: (argument types, return type); collectives without their request argument, which the
# nonblocking forms (prefix i) add at the end
_RED = [_c_comm_p, _vp, _vp, _sz, _int, _int]
_BLOCK = {
    "exscan": _RED,
    "scan": _RED,
    "reduce": _RED + [_int],
    "allreduce": _RED,
    "bcast": [_c_comm_p, _vp, _sz, _int, _int],
    "barrier": [_c_comm_p],
    "allgather": [_c_comm_p, _vp, _vp, _sz, _int],
    "allgatherv": [_c_comm_p, _vp, _sz, _vp, _szp, _szp, _int],
    "reduce_scatter_block": _RED,
    "reduce_scatter": [_c_comm_p, _vp, _vp, _szp, _int, _int],
    "alltoall": [_c_comm_p, _vp, _vp, _sz, _int],
    "alltoallv": [_c_comm_p, _vp, _szp, _szp, _vp, _szp, _szp, _int],
    "gather": [_c_comm_p, _vp, _vp, _sz, _int, _int],
    "gatherv": [_c_comm_p, _vp, _sz, _vp, _szp, _szp, _int, _int],
    "scatter": [_c_comm_p, _vp, _vp, _sz, _int, _int],
    "scatterv": [_c_comm_p, _vp, _szp, _szp, _vp, _sz, _int, _int],
}
COLLECTIVES = list(_BLOCK)


class Functions:
    """The C functions as attributes (tests replace one to see whether it was called)."""

    def __init__(self, lib):
        def bind(name, args, res=_int):
            f = getattr(lib, name)
            f.argtypes = args
            f.restype = res
            setattr(self, name, f)

        bind("ucoll_strerror", [_int], ctypes.c_char_p)
        bind("ucoll_init", [_out])
        bind("ucoll_init_store", [ctypes.c_char_p, _int, _int, _out])
        bind("ucoll_finalize", [_c_comm_p])
        bind("ucoll_comm_rank", [_c_comm_p])
        bind("ucoll_comm_size", [_c_comm_p])
        bind("ucoll_comm_split", [_c_comm_p, _int, _int, _out])
        bind("ucoll_comm_free", [_c_comm_p])
        bind("ucoll_comm_shrink", [_c_comm_p, _out])
        bind("ucoll_set_algorithm", [_c_comm_p, _int, ctypes.c_char_p])
        bind("ucoll_test", [_c_req_p])
        bind("ucoll_wait", [_c_req_p])
        bind("ucoll_request_free", [_c_req_p])
        for name, args in _BLOCK.items():
            bind("ucoll_" + name, args)
            bind("ucoll_i" + name, args + [_out])
