"""One ucoll world for the whole pytest session: every rank runs the same tests in the same
order, so the collectives match up across ranks."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


@pytest.fixture(scope="session")
def world():
    import ucoll
    w = ucoll.init()
    yield w
    ucoll.finalize()
