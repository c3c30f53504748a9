"""Every collective of ucoll on numpy arrays, run by every rank of a job (mpirun or the store):
each rank computes the expected result of every rank locally with numpy and compares. The job
size is asserted against UCOLL_PY_EXPECT_SIZE (1 when unset: a run without a launcher)."""
import os

import numpy as np
import pytest

import ucoll

N = 5  # elements per rank (per block in the block collectives)


def inp(r, n=N, dtype=np.int64):
    """rank r's input: distinct per rank and element"""
    return (np.arange(n) * 7 + r * 3 + 1).astype(dtype)


def test_job_size(world):
    assert world.size == int(os.environ.get("UCOLL_PY_EXPECT_SIZE", "1"))
    assert 0 <= world.rank < world.size


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64, np.uint64, np.float32, np.float64, np.float16])
def test_allreduce_dtypes(world, dtype):
    p = world.size
    recv = np.zeros(N, dtype)
    world.Allreduce(inp(world.rank, dtype=dtype), recv, op=ucoll.SUM)
    want = sum(inp(r, dtype=np.int64) for r in range(p)).astype(dtype)
    assert np.array_equal(recv, want)


@pytest.mark.parametrize("op,fn", [(ucoll.SUM, np.add), (ucoll.PROD, np.multiply),
                                   (ucoll.MIN, np.minimum), (ucoll.MAX, np.maximum),
                                   (ucoll.BXOR, np.bitwise_xor), (ucoll.BOR, np.bitwise_or)])
def test_reductions_and_scans(world, op, fn):
    p, me = world.size, world.rank
    ins = [inp(r) for r in range(p)]
    prefix = [ins[0]]
    for r in range(1, p):
        prefix.append(fn(prefix[-1], ins[r]))
    out = np.zeros(N, np.int64)
    world.Allreduce(ins[me], out, op=op)
    assert np.array_equal(out, prefix[-1])
    out = np.full(N, -5, np.int64)
    world.Scan(ins[me], out, op=op)
    assert np.array_equal(out, prefix[me])
    out = np.full(N, -5, np.int64)
    world.Exscan(ins[me], out, op=op)
    assert np.array_equal(out, prefix[me - 1] if me > 0 else np.full(N, -5))  # rank 0 untouched
    for root in range(p):
        out = np.full(N, -5, np.int64)
        world.Reduce(ins[me], out if me == root else None, op=op, root=root)
        assert np.array_equal(out, prefix[-1] if me == root else np.full(N, -5))


def test_avg(world):
    out = np.zeros(N)
    world.Allreduce(inp(world.rank, dtype=np.float64), out, op=ucoll.AVG)
    want = sum(inp(r, dtype=np.float64) for r in range(world.size)) / world.size
    assert np.allclose(out, want, rtol=1e-15)


def test_in_place(world):
    p, me = world.size, world.rank
    total = sum(inp(r) for r in range(p))
    buf = inp(me)
    world.Allreduce(ucoll.IN_PLACE, buf)
    assert np.array_equal(buf, total)
    buf = inp(me)
    world.Reduce(ucoll.IN_PLACE if me == 0 else buf, buf if me == 0 else None, root=0)
    assert np.array_equal(buf, total if me == 0 else inp(me))
    buf = inp(me)
    world.Scan(ucoll.IN_PLACE, buf)
    assert np.array_equal(buf, sum(inp(r) for r in range(me + 1)))
    recv = np.zeros(p * N, np.int64)
    recv[me * N:(me + 1) * N] = inp(me)
    world.Allgather(ucoll.IN_PLACE, recv)
    assert np.array_equal(recv, np.concatenate([inp(r) for r in range(p)]))
    big = np.concatenate([inp(me * p + j) for j in range(p)])
    world.Alltoall(ucoll.IN_PLACE, big)
    assert np.array_equal(big, np.concatenate([inp(r * p + me) for r in range(p)]))
    buf = np.concatenate([inp(me * p + j) for j in range(p)])
    world.Reduce_scatter_block(ucoll.IN_PLACE, buf)
    assert np.array_equal(buf[:N], sum(inp(r * p + me) for r in range(p)))


def test_bcast_barrier(world):
    p, me = world.size, world.rank
    for root in range(p):
        buf = inp(root) if me == root else np.zeros(N, np.int64)
        world.Bcast(buf, root=root)
        assert np.array_equal(buf, inp(root))
    world.Barrier()


def test_allgather_allgatherv(world):
    p, me = world.size, world.rank
    recv = np.zeros(p * N, np.int32)
    world.Allgather(inp(me, dtype=np.int32), recv)
    assert np.array_equal(recv, np.concatenate([inp(r, dtype=np.int32) for r in range(p)]))
    counts = [r + 1 for r in range(p)]
    displs = [sum(counts[:r]) + 2 * r for r in range(p)]  # gaps of 2 between blocks
    recv = np.full(displs[-1] + counts[-1], -1, np.int64)
    world.Allgatherv(inp(me, counts[me]), recv, counts, displs)
    want = np.full_like(recv, -1)
    for r in range(p):
        want[displs[r]:displs[r] + counts[r]] = inp(r, counts[r])
    assert np.array_equal(recv, want)


def test_reduce_scatter(world):
    p, me = world.size, world.rank
    # rank r's block j: inp(r * p + j)
    send = np.concatenate([inp(me * p + j) for j in range(p)])
    recv = np.zeros(N, np.int64)
    world.Reduce_scatter_block(send, recv)
    assert np.array_equal(recv, sum(inp(r * p + me) for r in range(p)))
    counts = [r + 2 for r in range(p)]
    send = np.concatenate([inp(me * p + j, counts[j]) for j in range(p)])
    recv = np.zeros(counts[me], np.int64)
    world.Reduce_scatter(send, recv, counts, op=ucoll.MAX)
    assert np.array_equal(recv, np.maximum.reduce([inp(r * p + me, counts[me]) for r in range(p)]))


def test_alltoall_alltoallv(world):
    p, me = world.size, world.rank
    send = np.concatenate([inp(me * p + j, dtype=np.float32) for j in range(p)])
    recv = np.zeros(p * N, np.float32)
    world.Alltoall(send, recv)
    assert np.array_equal(recv, np.concatenate([inp(r * p + me, dtype=np.float32)
                                                for r in range(p)]))
    # rank i sends i + j + 1 elements to rank j
    scounts = [me + j + 1 for j in range(p)]
    rcounts = [i + me + 1 for i in range(p)]
    send = np.concatenate([inp(me * p + j, scounts[j]) for j in range(p)])
    recv = np.zeros(sum(rcounts), np.int64)
    world.Alltoallv(send, recv, scounts, rcounts)
    assert np.array_equal(recv, np.concatenate([inp(i * p + me, rcounts[i]) for i in range(p)]))


def test_gather_scatter(world):
    p, me = world.size, world.rank
    for root in range(p):
        recv = np.zeros(p * N, np.int64) if me == root else None
        world.Gather(inp(me), recv, root=root)
        if me == root:
            assert np.array_equal(recv, np.concatenate([inp(r) for r in range(p)]))
        counts = [2 * r + 1 for r in range(p)]
        recv = np.zeros(sum(counts), np.int64) if me == root else None
        world.Gatherv(inp(me, counts[me]), recv, counts if me == root else None, root=root)
        if me == root:
            assert np.array_equal(recv, np.concatenate([inp(r, counts[r]) for r in range(p)]))
        send = np.concatenate([inp(root * p + j) for j in range(p)]) if me == root else None
        recv = np.zeros(N, np.int64)
        world.Scatter(send, recv, root=root)
        assert np.array_equal(recv, inp(root * p + me))
        send = (np.concatenate([inp(root * p + j, counts[j]) for j in range(p)])
                if me == root else None)
        recv = np.zeros(counts[me], np.int64)
        world.Scatterv(send, recv, counts if me == root else None, root=root)
        assert np.array_equal(recv, inp(root * p + me, counts[me]))


def test_nonblocking(world):
    p, me = world.size, world.rank
    total = sum(inp(r) for r in range(p))
    recv = np.zeros(N, np.int64)
    req = world.Iallreduce(inp(me), recv)
    assert len(req._keep) == 2  # both buffers held while in flight
    req.wait()
    assert req.done and req._keep is None
    assert np.array_equal(recv, total)
    # a send buffer with no other reference: the request must keep it alive
    recv = np.zeros(N, np.int64)
    req = world.Iscan(inp(me), recv)
    while not req.test():
        pass
    assert req.test()  # a completed request stays complete
    assert np.array_equal(recv, sum(inp(r) for r in range(me + 1)))
    reqs = [world.Ibarrier(), world.Ibcast(inp(0) if me == 0 else np.zeros(N, np.int64))]
    gathered = np.zeros(p * N, np.int64)
    reqs.append(world.Iallgather(inp(me), gathered))
    for r in reqs:
        r.wait()
    assert np.array_equal(gathered, np.concatenate([inp(r) for r in range(p)]))
    send = np.concatenate([inp(me * p + j) for j in range(p)])
    recv = np.zeros(p * N, np.int64)
    world.Ialltoall(send, recv).wait()
    assert np.array_equal(recv, np.concatenate([inp(r * p + me) for r in range(p)]))
    recv = np.zeros(N, np.int64)
    world.Ireduce_scatter_block(send, recv).wait()
    assert np.array_equal(recv, sum(inp(r * p + me) for r in range(p)))


def test_split(world):
    p, me = world.size, world.rank
    sub = world.Split(me % 2, -me)  # key -me: reversed order inside each color
    members = [r for r in range(p) if r % 2 == me % 2][::-1]
    assert sub.size == len(members)
    assert sub.rank == members.index(me)
    out = np.zeros(N, np.int64)
    sub.Allreduce(inp(me), out)
    assert np.array_equal(out, sum(inp(r) for r in members))
    sub.Free()
    with pytest.raises(ucoll.UcollError) as e:
        sub.Barrier()
    assert e.value.status == ucoll.ERR_STATE


def test_shrink_without_failure(world):
    # nobody failed: the same members in the same order, a communicator of its own
    me, p = world.rank, world.size
    sub = world.Shrink()
    assert (sub.size, sub.rank) == (p, me)
    out = np.zeros(N, np.int64)
    sub.Allreduce(inp(me), out)
    assert np.array_equal(out, sum(inp(r) for r in range(p)))
    sub.Free()


def test_shrink_limit(world):
    # the messages' generation field allows 8 shrinks of one communicator; the 9th is refused
    # on every rank, sending nothing
    sub = world.Split(0, 0)
    for _ in range(8):
        sub.Shrink().Free()
    with pytest.raises(ucoll.UcollError) as e:
        sub.Shrink()
    assert e.value.status == ucoll.ERR_NOT_SUPPORTED
    sub.Barrier()
    sub.Free()


def test_set_algorithm(world):
    p, me = world.size, world.rank
    for alg in ["rhrd", "ring", "auto"]:
        world.set_algorithm("allreduce", alg)
        out = np.zeros(N, np.int64)
        world.Allreduce(inp(me), out)
        assert np.array_equal(out, sum(inp(r) for r in range(p)))
    ucoll.set_algorithm(world, "allreduce", "auto")
    with pytest.raises(ucoll.UcollError) as e:
        world.set_algorithm("allreduce", "no-such-algorithm")
    assert e.value.status == ucoll.ERR_INVALID_ARG
    assert e.value.message == ucoll._C.ucoll_strerror(ucoll.ERR_INVALID_ARG).decode()
    with pytest.raises(ValueError, match="unknown collective"):
        world.set_algorithm("allreduc", "auto")


def test_c_errors_raise(world):
    # refused on every rank alike before anything is sent: the comm stays usable
    a = np.ones(N)
    with pytest.raises(ucoll.UcollError) as e:
        world.Allreduce(a, np.zeros(N), op=ucoll.BAND)  # bitwise op on a float type
    assert e.value.status == ucoll.ERR_INVALID_ARG
    with pytest.raises(ucoll.UcollError) as e:
        world.Allreduce(np.ones(N, np.int32), np.zeros(N, np.int32), op=ucoll.AVG)
    assert e.value.status == ucoll.ERR_INVALID_ARG
    with pytest.raises(ucoll.UcollError) as e:
        world.Bcast(a, root=world.size)  # root out of range
    assert e.value.status == ucoll.ERR_INVALID_ARG
    assert "status -1" in str(e.value)
    world.Barrier()


class Spy:
    def __init__(self):
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return ucoll.OK


def test_bad_arrays_rejected_before_c(world, monkeypatch):
    p = world.size
    spies = {}
    for name in ["allreduce", "iallreduce", "bcast", "allgather", "alltoallv", "scatter"]:
        spies[name] = Spy()
        monkeypatch.setattr(ucoll._C, "ucoll_" + name, spies[name])
    good = np.zeros(N)
    cases = [
        (TypeError, lambda: world.Allreduce([1.0] * N, good)),  # not an array
        (TypeError, lambda: world.Allreduce(np.zeros(N, np.complex128),
                                            np.zeros(N, np.complex128))),
        (TypeError, lambda: world.Allreduce(np.zeros(N, np.bool_), np.zeros(N, np.bool_))),
        (TypeError, lambda: world.Allreduce(np.zeros(N, ">f8"), np.zeros(N, ">f8"))),
        (TypeError, lambda: world.Allreduce(np.zeros(N, np.float32), good)),  # mixed dtypes
        (ValueError, lambda: world.Allreduce(np.zeros(2 * N)[::2], good)),  # strided
        (ValueError, lambda: world.Allreduce(np.zeros((N, 2)).T, np.zeros((2, N)))),
        (ValueError, lambda: world.Allreduce(np.zeros(N + 1), good)),  # wrong size
        (ValueError, lambda: world.Iallreduce(np.zeros(N), np.zeros(N - 1))),
        (ValueError, lambda: world.Bcast(np.zeros(N)[::-1])),
        (ValueError, lambda: world.Bcast(np.frombuffer(bytes(8 * N)))),  # read-only
        (ValueError, lambda: world.Allgather(good, np.zeros(p * N + 1))),
        (ValueError, lambda: world.Alltoallv(good, good, [N] * (p + 1), [N] * p)),
        (ValueError, lambda: world.Alltoallv(good, good, [-1] * p, [0] * p)),
        (ValueError, lambda: world.Alltoallv(good, np.zeros(1), [0] * p, [1] * p,
                                             None, [5] * p)),
        (ValueError, lambda: world.Scatter(np.zeros(p * N), np.zeros(N + 1), root=world.rank)),
    ]
    for exc, call in cases:
        with pytest.raises(exc):
            call()
    assert all(s.calls == 0 for s in spies.values()), {k: s.calls for k, s in spies.items()}
    world.Allreduce(np.ones(N), good)  # the spy: counted, so a good call does reach "C"
    assert spies["allreduce"].calls == 1


def test_nonblocking_every_form(world):
    """each I-form gives what its blocking form gives (checked above against numpy)"""
    p, me = world.size, world.rank
    counts = [r + 1 for r in range(p)]
    blocks = np.concatenate([inp(me * p + j) for j in range(p)])
    vblocks = np.concatenate([inp(me * p + j, counts[j]) for j in range(p)])
    root = p - 1
    at_root = me == root
    forms = [  # name, the arguments given recv, recv's size
        ("exscan", lambda r: (inp(me), r), N),
        ("reduce", lambda r: (inp(me), r if at_root else None, ucoll.SUM, root), N),
        ("allgatherv", lambda r: (inp(me, counts[me]), r, counts), sum(counts)),
        ("reduce_scatter", lambda r: (vblocks, r, counts), counts[me]),
        ("alltoallv", lambda r: (vblocks, r, counts, [me + 1] * p), p * (me + 1)),
        ("gather", lambda r: (inp(me), r if at_root else None, root), p * N),
        ("gatherv", lambda r: (inp(me, counts[me]), r if at_root else None,
                               counts if at_root else None, None, root), sum(counts)),
        ("scatter", lambda r: (blocks if at_root else None, r, root), N),
        ("scatterv", lambda r: (vblocks if at_root else None, r, counts if at_root else None,
                                None, root), counts[me]),
    ]
    for name, args, n in forms:
        want = np.full(n, -3, np.int64)
        got = np.full(n, -3, np.int64)
        getattr(world, name.capitalize())(*args(want))  # Exscan, Reduce_scatter, ...
        req = getattr(world, "I" + name)(*args(got))
        req.wait()
        assert np.array_equal(got, want), name
    # the blocking results themselves, where not checked elsewhere: alltoallv's varying counts
    recv = np.zeros(p * (me + 1), np.int64)
    world.Alltoallv(vblocks, recv, counts, [me + 1] * p)
    assert np.array_equal(recv, np.concatenate([inp(i * p + me, me + 1) for i in range(p)]))


def test_in_place_rooted_and_v(world):
    p, me = world.size, world.rank
    root = 1 % p
    counts = [r + 1 for r in range(p)]
    displs = [sum(counts[:r]) for r in range(p)]
    # gather / gatherv: the root's own block already in place
    if me == root:
        recv = np.zeros(p * N, np.int64)
        recv[me * N:(me + 1) * N] = inp(me)
        world.Gather(ucoll.IN_PLACE, recv, root=root)
        assert np.array_equal(recv, np.concatenate([inp(r) for r in range(p)]))
        recv = np.zeros(sum(counts), np.int64)
        recv[displs[me]:displs[me] + counts[me]] = inp(me, counts[me])
        world.Gatherv(ucoll.IN_PLACE, recv, counts, root=root)
        assert np.array_equal(recv, np.concatenate([inp(r, counts[r]) for r in range(p)]))
    else:
        world.Gather(inp(me), None, root=root)
        world.Gatherv(inp(me, counts[me]), None, root=root)
    # scatter / scatterv: IN_PLACE as the root's recv, its block stays in send
    if me == root:
        send = np.concatenate([inp(j) for j in range(p)])
        world.Scatter(send, ucoll.IN_PLACE, root=root)
        assert np.array_equal(send, np.concatenate([inp(j) for j in range(p)]))
        send = np.concatenate([inp(j, counts[j]) for j in range(p)])
        world.Scatterv(send, ucoll.IN_PLACE, counts, root=root)
    else:
        recv = np.zeros(N, np.int64)
        world.Scatter(None, recv, root=root)
        assert np.array_equal(recv, inp(me))
        recv = np.zeros(counts[me], np.int64)
        world.Scatterv(None, recv, root=root)
        assert np.array_equal(recv, inp(me, counts[me]))
    # allgatherv, reduce_scatter, alltoallv, exscan in place
    recv = np.zeros(sum(counts), np.int64)
    recv[displs[me]:displs[me] + counts[me]] = inp(me, counts[me])
    world.Allgatherv(ucoll.IN_PLACE, recv, counts)
    assert np.array_equal(recv, np.concatenate([inp(r, counts[r]) for r in range(p)]))
    buf = np.concatenate([inp(me * p + j, counts[j]) for j in range(p)])
    world.Reduce_scatter(ucoll.IN_PLACE, buf, counts)
    assert np.array_equal(buf[:counts[me]], sum(inp(r * p + me, counts[me]) for r in range(p)))
    buf = np.concatenate([inp(me * p + j, 2) for j in range(p)])
    world.Alltoallv(ucoll.IN_PLACE, buf, None, [2] * p)
    assert np.array_equal(buf, np.concatenate([inp(i * p + me, 2) for i in range(p)]))
    buf = inp(me)
    world.Exscan(ucoll.IN_PLACE, buf)
    assert np.array_equal(buf, sum(inp(r) for r in range(me)) if me > 0 else inp(0))


def test_request_dropped_while_active(world):
    """a Request dropped before completion keeps its buffers until the collective completes"""
    import gc
    import time
    p, me = world.size, world.rank
    recv = np.zeros(1000, np.int64)
    req = world.Iallreduce(np.full(1000, me + 1, np.int64), recv)  # send: no other reference
    del req
    gc.collect()
    deadline = time.monotonic() + 60
    while ucoll._reap() > 0:
        assert time.monotonic() < deadline, "a dropped request never completed"
    assert ucoll._abandoned == []
    assert np.array_equal(recv, np.full(1000, p * (p + 1) // 2))
    world.Barrier()
