"""The garbage-collector pause restores the caller's setting, also on errors and when nested."""

from __future__ import annotations

import gc

import pytest

from rfexplain.circuit.compilers.gcpause import without_gc


@without_gc
def _inner() -> bool:
    return gc.isenabled()


@without_gc
def _outer() -> tuple[bool, bool, bool]:
    before = gc.isenabled()
    inner = _inner()
    return before, inner, gc.isenabled()  # the inner call leaves the outer pause alone


def test_pause_is_reentrant_and_restores_the_previous_state() -> None:
    assert gc.isenabled()
    assert _outer() == (False, False, False)
    assert gc.isenabled()
    gc.disable()
    try:
        assert _inner() is False
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
