"""ucoll for Python: mpi4py-like buffer collectives on numpy arrays, over libucoll.so (ctypes).

Counts are taken from the arrays: every buffer must be a C-contiguous numpy array of a
supported dtype, and the receive buffers must be writable. Wrong arrays raise TypeError or
ValueError before any C function is called; a failed C call raises UcollError.
"""
import ctypes

import numpy as np

from . import _lib

__all__ = ["init", "init_store", "finalize", "Comm", "Request", "UcollError", "IN_PLACE",
           "set_algorithm"]

# status codes, as include/ucoll.h's ucoll_status_t
OK = 0
INPROGRESS = 1
ERR_INVALID_ARG = -1
ERR_NO_MEMORY = -2
ERR_NOT_SUPPORTED = -3
ERR_BOOTSTRAP = -4
ERR_TRANSPORT = -5
ERR_PEER_FAILED = -6
ERR_TIMED_OUT = -7
ERR_TRUNCATED = -8
ERR_STATE = -9
ERR_MISMATCH = -10

# ucoll_dtype_t
INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64 = range(8)
FLOAT32, FLOAT64, FLOAT16, BFLOAT16 = range(8, 12)

# predefined ops
SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, AVG = range(11)

# ucoll_coll_t, by the name set_algorithm takes
COLL = {name: i for i, name in enumerate(_lib.COLLECTIVES)}

_DTYPES = {
    np.dtype(np.int8): INT8, np.dtype(np.uint8): UINT8,
    np.dtype(np.int16): INT16, np.dtype(np.uint16): UINT16,
    np.dtype(np.int32): INT32, np.dtype(np.uint32): UINT32,
    np.dtype(np.int64): INT64, np.dtype(np.uint64): UINT64,
    np.dtype(np.float32): FLOAT32, np.dtype(np.float64): FLOAT64,
    np.dtype(np.float16): FLOAT16,
}

_C = _lib.Functions(_lib.load())


class UcollError(Exception):
    """A ucoll call returned an error: .status is the code, .message ucoll_strerror's text."""

    def __init__(self, status, where=""):
        self.status = status
        self.message = _C.ucoll_strerror(status).decode()
        super().__init__("%s%s (status %d)" % (where + ": " if where else "", self.message,
                                               status))


def _check(status, where):
    if status != OK:
        raise UcollError(status, where)


class _InPlace:
    def __repr__(self):
        return "ucoll.IN_PLACE"


IN_PLACE = _InPlace()
_IN_PLACE_PTR = ctypes.c_void_p(ctypes.c_size_t(-1).value)  # (const void *)-1


def dtype_of(arr):
    """The ucoll dtype of a numpy array's dtype (TypeError if ucoll has none)."""
    code = _DTYPES.get(arr.dtype) if arr.dtype.isnative else None
    if code is None:
        raise TypeError("ucoll: unsupported dtype %s (int8..uint64, float16, float32, float64 "
                        "in native byte order)" % arr.dtype)
    return code


def _array(a, name, writable):
    if not isinstance(a, np.ndarray):
        raise TypeError("ucoll: %s must be a numpy array, not %s" % (name, type(a).__name__))
    if not a.flags.c_contiguous:
        raise ValueError("ucoll: %s is not C-contiguous" % name)
    if writable and not a.flags.writeable:
        raise ValueError("ucoll: %s is read-only" % name)
    dtype_of(a)
    return a


class _Call:
    """The checked arguments of one collective: C arguments and the objects they point into."""

    def __init__(self):
        self.keep = []
        self.dtype = None

    def buf(self, a, name, writable=False):
        a = _array(a, name, writable)
        d = dtype_of(a)
        if self.dtype is None:
            self.dtype = d
        elif d != self.dtype:
            raise TypeError("ucoll: %s has dtype %s, the other buffer another one" %
                            (name, a.dtype))
        self.keep.append(a)
        return ctypes.c_void_p(a.ctypes.data)

    def counts(self, values, n, name):
        values = [int(v) for v in values]
        if len(values) != n:
            raise ValueError("ucoll: %s has %d entries, the communicator %d ranks" %
                             (name, len(values), n))
        if any(v < 0 for v in values):
            raise ValueError("ucoll: %s has a negative entry" % name)
        arr = (ctypes.c_size_t * n)(*values)
        self.keep.append(arr)
        return values, arr


def _need(cond, what):
    if not cond:
        raise ValueError("ucoll: " + what)


def _displs(counts, displs):
    if displs is None:
        return [int(x) for x in np.concatenate(([0], np.cumsum(counts)[:-1]))]
    return displs


def _extent(counts, displs):
    return max([c + d for c, d in zip(counts, displs)] + [0])


class Request:
    """A nonblocking collective in flight. It keeps its buffers alive until it completes and
    frees its C request then (wait(), or test() returning True)."""

    def __init__(self, handle, keep):
        self._h = handle
        self._keep = keep
        self.done = False

    def _finish(self, status):
        _C.ucoll_request_free(self._h)
        self._h = None
        self._keep = None
        self.done = True
        _check(status, "request")

    def wait(self):
        if self.done:
            return
        self._finish(_C.ucoll_wait(self._h))

    def test(self):
        """True once complete (raises UcollError if it failed), False while in progress."""
        if self.done:
            return True
        st = _C.ucoll_test(self._h)
        if st == INPROGRESS:
            return False
        self._finish(st)
        return True

    def __del__(self):
        # dropped while active: ucoll still writes into its buffers, so they stay alive until
        # _reap sees the request complete (its status is lost: nobody is left to raise it to)
        if not self.done and self._h is not None:
            if _C.ucoll_request_free(self._h) != OK:
                _abandoned.append((self._h, self._keep))


_abandoned = []  # (C request, buffers) of Requests dropped while active


def _reap():
    """Frees the dropped requests that have completed; returns how many are still active."""
    still = []
    for h, keep in _abandoned:
        if _C.ucoll_test(h) == INPROGRESS:
            still.append((h, keep))
        else:
            _C.ucoll_request_free(h)
    _abandoned[:] = still
    return len(still)


def _collective(name, doc):
    """The blocking method Name and the nonblocking Iname from one argument builder."""
    def blocking(self, *args, **kw):
        call, cargs = getattr(self, "_args_" + name)(*args, **kw)
        _check(getattr(_C, "ucoll_" + name)(self._ptr(), *cargs), name)

    def nonblocking(self, *args, **kw):
        call, cargs = getattr(self, "_args_" + name)(*args, **kw)
        if _abandoned:
            _reap()
        req = ctypes.c_void_p()
        _check(getattr(_C, "ucoll_i" + name)(self._ptr(), *cargs, ctypes.byref(req)),
               "i" + name)
        return Request(req, call.keep)

    blocking.__doc__ = doc
    nonblocking.__doc__ = "Nonblocking " + doc + " Returns a Request."
    return blocking, nonblocking


class Comm:
    """A ucoll communicator (world from init or init_store, others from Split)."""

    def __init__(self, handle, world=False):
        self._h = handle
        self._world = world

    def _ptr(self):
        if self._h is None:
            raise UcollError(ERR_STATE, "communicator freed")
        return self._h

    @property
    def rank(self):
        return _C.ucoll_comm_rank(self._h)

    @property
    def size(self):
        return _C.ucoll_comm_size(self._h)

    def Split(self, color, key=0):
        out = ctypes.c_void_p()
        _check(_C.ucoll_comm_split(self._ptr(), int(color), int(key), ctypes.byref(out)),
               "split")
        return Comm(out)

    def Shrink(self):
        """After a failure (ERR_PEER_FAILED): the communicator of the members still alive,
        agreed by all of them (collective over the survivors)."""
        out = ctypes.c_void_p()
        _check(_C.ucoll_comm_shrink(self._ptr(), ctypes.byref(out)), "comm_shrink")
        return Comm(out)

    def Free(self):
        if self._world:
            raise UcollError(ERR_INVALID_ARG, "the world communicator is freed by finalize")
        _check(_C.ucoll_comm_free(self._ptr()), "comm_free")
        self._h = None

    def set_algorithm(self, coll, alg):
        if coll not in COLL:
            raise ValueError("ucoll: unknown collective %r (one of %s)" %
                             (coll, ", ".join(COLL)))
        _check(_C.ucoll_set_algorithm(self._ptr(), COLL[coll], alg.encode()), "set_algorithm")

    # ---- argument builders: (call, C arguments after the comm)
    def _reduction(self, send, recv, op, recv_needed=True):
        c = _Call()
        if recv is None and not recv_needed:
            _need(send is not IN_PLACE, "IN_PLACE needs a receive buffer")
            s = c.buf(send, "send")
            return c, [s, None, send.size, c.dtype, op]
        r = c.buf(recv, "recv", writable=True)
        if send is IN_PLACE:
            return c, [_IN_PLACE_PTR, r, recv.size, c.dtype, op]
        s = c.buf(send, "send")
        _need(send.size == recv.size, "send has %d elements, recv %d" % (send.size, recv.size))
        return c, [s, r, recv.size, c.dtype, op]

    def _args_allreduce(self, send, recv, op=SUM):
        return self._reduction(send, recv, op)

    def _args_exscan(self, send, recv, op=SUM):
        return self._reduction(send, recv, op)

    def _args_scan(self, send, recv, op=SUM):
        return self._reduction(send, recv, op)

    def _args_reduce(self, send, recv, op=SUM, root=0):
        c, a = self._reduction(send, recv, op, recv_needed=False)
        return c, a + [int(root)]

    def _args_bcast(self, buf, root=0):
        c = _Call()
        b = c.buf(buf, "buf", writable=True)
        return c, [b, buf.size, c.dtype, int(root)]

    def _args_barrier(self):
        return _Call(), []

    def _args_allgather(self, send, recv):
        c = _Call()
        n = self.size
        r = c.buf(recv, "recv", writable=True)
        _need(recv.size % n == 0, "recv's %d elements are no multiple of %d ranks" %
              (recv.size, n))
        if send is IN_PLACE:
            return c, [_IN_PLACE_PTR, r, recv.size // n, c.dtype]
        s = c.buf(send, "send")
        _need(recv.size == n * send.size, "recv must hold size * %d elements" % send.size)
        return c, [s, r, send.size, c.dtype]

    def _args_allgatherv(self, send, recv, counts, displs=None):
        c = _Call()
        n = self.size
        counts, ccounts = c.counts(counts, n, "counts")
        displs, cdispls = c.counts(_displs(counts, displs), n, "displs")
        r = c.buf(recv, "recv", writable=True)
        _need(recv.size >= _extent(counts, displs), "recv is too small for counts and displs")
        if send is IN_PLACE:
            s = _IN_PLACE_PTR
        else:
            s = c.buf(send, "send")
            _need(send.size == counts[self.rank], "send has %d elements, counts[rank] %d" %
                  (send.size, counts[self.rank]))
        return c, [s, counts[self.rank], r, ccounts, cdispls, c.dtype]

    def _args_reduce_scatter_block(self, send, recv, op=SUM):
        c = _Call()
        n = self.size
        r = c.buf(recv, "recv", writable=True)
        if send is IN_PLACE:
            _need(recv.size % n == 0, "in place, recv must hold size blocks")
            return c, [_IN_PLACE_PTR, r, recv.size // n, c.dtype, op]
        s = c.buf(send, "send")
        _need(send.size == n * recv.size, "send must hold size * %d elements" % recv.size)
        return c, [s, r, recv.size, c.dtype, op]

    def _args_reduce_scatter(self, send, recv, recvcounts, op=SUM):
        c = _Call()
        counts, ccounts = c.counts(recvcounts, self.size, "recvcounts")
        r = c.buf(recv, "recv", writable=True)
        if send is IN_PLACE:
            _need(recv.size == sum(counts), "in place, recv must hold sum(recvcounts) elements")
            return c, [_IN_PLACE_PTR, r, ccounts, c.dtype, op]
        s = c.buf(send, "send")
        _need(send.size == sum(counts), "send must hold sum(recvcounts) elements")
        _need(recv.size == counts[self.rank], "recv must hold recvcounts[rank] elements")
        return c, [s, r, ccounts, c.dtype, op]

    def _args_alltoall(self, send, recv):
        c = _Call()
        n = self.size
        r = c.buf(recv, "recv", writable=True)
        _need(recv.size % n == 0, "recv's %d elements are no multiple of %d ranks" %
              (recv.size, n))
        if send is IN_PLACE:
            return c, [_IN_PLACE_PTR, r, recv.size // n, c.dtype]
        s = c.buf(send, "send")
        _need(send.size == recv.size, "send has %d elements, recv %d" % (send.size, recv.size))
        return c, [s, r, recv.size // n, c.dtype]

    def _args_alltoallv(self, send, recv, sendcounts, recvcounts, sdispls=None, rdispls=None):
        c = _Call()
        n = self.size
        rc, crc = c.counts(recvcounts, n, "recvcounts")
        rd, crd = c.counts(_displs(rc, rdispls), n, "rdispls")
        r = c.buf(recv, "recv", writable=True)
        _need(recv.size >= _extent(rc, rd), "recv is too small for recvcounts and rdispls")
        if send is IN_PLACE:
            return c, [_IN_PLACE_PTR, None, None, r, crc, crd, c.dtype]
        sc, csc = c.counts(sendcounts, n, "sendcounts")
        sd, csd = c.counts(_displs(sc, sdispls), n, "sdispls")
        s = c.buf(send, "send")
        _need(send.size >= _extent(sc, sd), "send is too small for sendcounts and sdispls")
        return c, [s, csc, csd, r, crc, crd, c.dtype]

    def _args_gather(self, send, recv=None, root=0):
        c = _Call()
        n, root = self.size, int(root)
        if self.rank == root:
            r = c.buf(recv, "recv", writable=True)
            _need(recv.size % n == 0, "recv must hold size blocks")
            if send is IN_PLACE:
                return c, [_IN_PLACE_PTR, r, recv.size // n, c.dtype, root]
            s = c.buf(send, "send")
            _need(recv.size == n * send.size, "recv must hold size * %d elements" % send.size)
            return c, [s, r, send.size, c.dtype, root]
        s = c.buf(send, "send")
        return c, [s, None, send.size, c.dtype, root]

    def _args_gatherv(self, send, recv=None, counts=None, displs=None, root=0):
        c = _Call()
        root = int(root)
        if self.rank != root:
            s = c.buf(send, "send")
            return c, [s, send.size, None, None, None, c.dtype, root]
        _need(counts is not None, "counts are needed at the root")
        counts, ccounts = c.counts(counts, self.size, "counts")
        displs, cdispls = c.counts(_displs(counts, displs), self.size, "displs")
        r = c.buf(recv, "recv", writable=True)
        _need(recv.size >= _extent(counts, displs), "recv is too small for counts and displs")
        if send is IN_PLACE:
            return c, [_IN_PLACE_PTR, counts[root], r, ccounts, cdispls, c.dtype, root]
        s = c.buf(send, "send")
        _need(send.size == counts[root], "send has %d elements, counts[root] %d" %
              (send.size, counts[root]))
        return c, [s, send.size, r, ccounts, cdispls, c.dtype, root]

    def _args_scatter(self, send, recv, root=0):
        c = _Call()
        n, root = self.size, int(root)
        if self.rank == root:
            s = c.buf(send, "send")
            _need(send.size % n == 0, "send must hold size blocks")
            if recv is IN_PLACE:
                return c, [s, _IN_PLACE_PTR, send.size // n, c.dtype, root]
            r = c.buf(recv, "recv", writable=True)
            _need(send.size == n * recv.size, "send must hold size * %d elements" % recv.size)
            return c, [s, r, recv.size, c.dtype, root]
        r = c.buf(recv, "recv", writable=True)
        return c, [None, r, recv.size, c.dtype, root]

    def _args_scatterv(self, send, recv, counts=None, displs=None, root=0):
        c = _Call()
        root = int(root)
        if self.rank != root:
            r = c.buf(recv, "recv", writable=True)
            return c, [None, None, None, r, recv.size, c.dtype, root]
        _need(counts is not None, "counts are needed at the root")
        counts, ccounts = c.counts(counts, self.size, "counts")
        displs, cdispls = c.counts(_displs(counts, displs), self.size, "displs")
        s = c.buf(send, "send")
        _need(send.size >= _extent(counts, displs), "send is too small for counts and displs")
        if recv is IN_PLACE:
            return c, [s, ccounts, cdispls, _IN_PLACE_PTR, counts[root], c.dtype, root]
        r = c.buf(recv, "recv", writable=True)
        _need(recv.size == counts[root], "recv has %d elements, counts[root] %d" %
              (recv.size, counts[root]))
        return c, [s, ccounts, cdispls, r, recv.size, c.dtype, root]

    Allreduce, Iallreduce = _collective("allreduce", "Allreduce(send, recv, op=SUM).")
    Exscan, Iexscan = _collective("exscan", "Exscan(send, recv, op=SUM).")
    Scan, Iscan = _collective("scan", "Scan(send, recv, op=SUM).")
    Reduce, Ireduce = _collective("reduce", "Reduce(send, recv, op=SUM, root=0).")
    Bcast, Ibcast = _collective("bcast", "Bcast(buf, root=0).")
    Barrier, Ibarrier = _collective("barrier", "Barrier().")
    Allgather, Iallgather = _collective("allgather", "Allgather(send, recv).")
    Allgatherv, Iallgatherv = _collective("allgatherv",
                                          "Allgatherv(send, recv, counts, displs=None).")
    Reduce_scatter_block, Ireduce_scatter_block = _collective(
        "reduce_scatter_block", "Reduce_scatter_block(send, recv, op=SUM).")
    Reduce_scatter, Ireduce_scatter = _collective(
        "reduce_scatter", "Reduce_scatter(send, recv, recvcounts, op=SUM).")
    Alltoall, Ialltoall = _collective("alltoall", "Alltoall(send, recv).")
    Alltoallv, Ialltoallv = _collective(
        "alltoallv", "Alltoallv(send, recv, sendcounts, recvcounts, sdispls=None, rdispls=None).")
    Gather, Igather = _collective("gather", "Gather(send, recv=None, root=0).")
    Gatherv, Igatherv = _collective("gatherv",
                                    "Gatherv(send, recv=None, counts=None, displs=None, root=0).")
    Scatter, Iscatter = _collective("scatter", "Scatter(send, recv, root=0).")
    Scatterv, Iscatterv = _collective("scatterv",
                                      "Scatterv(send, recv, counts=None, displs=None, root=0).")


_world = None


def init():
    """ucoll_init: PMIx (mpirun, srun --mpi=pmix; alone a 1-rank job) or, with UCOLL_STORE,
    UCOLL_RANK and UCOLL_SIZE set, the store. Returns the world Comm."""
    global _world
    out = ctypes.c_void_p()
    _check(_C.ucoll_init(ctypes.byref(out)), "init")
    _world = Comm(out, world=True)
    return _world


def init_store(address, rank, size):
    """ucoll_init_store: rank 0 serves address ("HOST:PORT"), every rank connects to it."""
    global _world
    out = ctypes.c_void_p()
    _check(_C.ucoll_init_store(address.encode(), int(rank), int(size), ctypes.byref(out)),
           "init_store")
    _world = Comm(out, world=True)
    return _world


def finalize(world=None):
    """ucoll_finalize of the world communicator (and every one split from it)."""
    global _world
    w = world if world is not None else _world
    if w is None:
        raise UcollError(ERR_STATE, "finalize before init")
    _reap()
    st = _C.ucoll_finalize(w._ptr())
    _abandoned.clear()  # finalize ended whatever was still active: no more writes into them
    w._h = None
    _world = None
    _check(st, "finalize")


def set_algorithm(comm, coll, alg):
    """ucoll_set_algorithm(comm, coll by name ("allreduce", ...), alg name)."""
    comm.set_algorithm(coll, alg)
