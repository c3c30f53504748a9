"""Refused starts raise UcollError with the C status (run in a process of its own, before any
init: a refused ucoll_init_store keeps nothing)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ucoll  # noqa: E402


@pytest.mark.parametrize("address,rank,size", [("no-port-here", 0, 1), ("127.0.0.1:1", 2, 2),
                                               ("127.0.0.1:1", -1, 1)])
def test_init_store_refused(address, rank, size):
    with pytest.raises(ucoll.UcollError) as e:
        ucoll.init_store(address, rank, size)
    assert e.value.status == ucoll.ERR_INVALID_ARG
    assert e.value.message == ucoll._C.ucoll_strerror(ucoll.ERR_INVALID_ARG).decode()


def test_finalize_before_init():
    with pytest.raises(ucoll.UcollError) as e:
        ucoll.finalize()
    assert e.value.status == ucoll.ERR_STATE
