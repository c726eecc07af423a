"""The garbage-collector pause restores the caller's setting, also on errors and when nested."""

from __future__ import annotations

import gc

import pytest

from rfexplain.gcpause import gc_paused, without_gc


def test_pause_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves the outer pause alone
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a caller's own disabled collector stays disabled
    finally:
        gc.enable()


def test_decorator_restores_on_error() -> None:
    @without_gc
    def boom() -> None:
        assert not gc.isenabled()
        raise RuntimeError("x")

    with pytest.raises(RuntimeError):
        boom()
    assert gc.isenabled()
