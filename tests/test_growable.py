"""Arrays grown in place (the compact core's largest arrays): every growth keeps the rows and
adds zeros, by remapping where the platform can (Linux), else by a grown copy."""

from __future__ import annotations

import mmap
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfexplain.circuit.compilers.growable import GrowableArray
from tests.hypothesis_budget import examples

remaps = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(mmap, "MAP_PRIVATE"), reason="mremap is Linux's"
)


@settings(max_examples=examples(60), deadline=None)
@given(
    dtype=st.sampled_from([np.uint16, np.int32, np.int64]),
    cols=st.sampled_from([0, 2, 4]),
    steps=st.lists(st.integers(1, 5000), min_size=1, max_size=6),
    in_place=st.booleans(),
)
def test_growth_keeps_the_rows_and_adds_zeros(dtype: type, cols: int, steps: list[int], in_place: bool) -> None:
    g = GrowableArray(dtype, 16, cols, in_place=in_place)
    rng = np.random.default_rng(len(steps))
    want = np.zeros((16, cols) if cols else 16, dtype)
    for rows in steps:
        view = g.view()
        fill = rng.integers(0, 1000, size=view.shape).astype(dtype)
        view[:] = fill
        want = fill
        del view  # no view may outlive a growth
        old = g.rows
        g.grow(rows)
        assert g.rows >= rows and (g.rows == old or g.rows >= 2 * old)
        got = g.view()
        assert got.shape[0] == g.rows and got.dtype == np.dtype(dtype)
        assert np.array_equal(got[:old], want) and not got[old:].any()
        del got
    if not in_place:
        assert g.remapped == 0


@remaps
def test_a_mapped_array_grows_without_a_copy() -> None:
    g = GrowableArray(np.int32, 1 << 20)
    view = g.view()
    view[:] = 7
    del view
    g.grow(1 << 24)
    view = g.view()
    assert g.remapped == 1 and view[(1 << 20) - 1] == 7 and view[-1] == 0


@remaps
def test_the_products_arrays_grow_by_remapping(monkeypatch: pytest.MonkeyPatch) -> None:
    """A product past every array's first size (wine, 12 trees) grows its arrays in place."""
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain import Forest
    from rfexplain.circuit.compilers import dd_core, dd_kernels
    from rfexplain.circuit.compilers.classformula import ClassFormulas
    from rfexplain.circuit.compilers.votecount import VoteCounter

    made: list[GrowableArray] = []
    init = GrowableArray.__init__

    def recording_init(self: GrowableArray, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(self)

    monkeypatch.setattr(GrowableArray, "__init__", recording_init)
    X, y = datasets.load_wine(return_X_y=True)
    forest = Forest.from_sklearn(RandomForestClassifier(n_estimators=12, max_depth=4, random_state=0).fit(X, y))
    cf = ClassFormulas(forest, core="compact")
    assert cf.vote_graph(0, 1) == VoteCounter(forest, cf.dg).at_least({0: 1, 1: -1}, 0)
    assert isinstance(cf._counter, dd_core.CompactCounter) and len(made) == len(dd_kernels.GROWN) == 6
    assert all(g.remapped > 0 for g in made), [(g.rows, g.remapped) for g in made]
