"""One ucoll world for the whole pytest session: every rank runs the same tests in the same
order, so the collectives match up across ranks. UCOLL_PY_START=init_store starts through
ucoll.init_store instead of ucoll.init."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


@pytest.fixture(scope="session")
def world():
    import ucoll
    if os.environ.get("UCOLL_PY_START") == "init_store":
        # the store's start called explicitly, with what run_store.sh hands each rank
        w = ucoll.init_store(os.environ["UCOLL_STORE"], int(os.environ["UCOLL_RANK"]),
                             int(os.environ["UCOLL_SIZE"]))
    else:
        w = ucoll.init()  # PMIx under a launcher, the store when UCOLL_STORE is set
    yield w
    ucoll.finalize()
