"""Cross-engine agreement on real forests (docs/design.md, section 4).

The SAT and circuit engines share nothing but the forest model, so equal answers are evidence of
correctness where the oracle cannot reach: the same *sets* of sufficient, necessary, shortest and
contrastive reasons, the same robustness and the same canonical single reasons, on forests
trained on scikit-learn's bundled datasets and on the benchmark suite shipped with the package.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx
from rfexplain import datasets

CASES = [
    ("iris", 20, 4),
    pytest.param("wine", 15, 3, marks=pytest.mark.slow),  # three classes: in the slow run too
    pytest.param("breast_cancer", 10, 3, marks=pytest.mark.slow),  # 30 features: python -m pytest -m slow
]
BENCHMARKS = [("ecoli", 10, 3), ("new-thyroid", 15, 3), ("threeOf9", 10, 4), ("glass2", 10, 3)]
INSTANCES = 4
#: CPU seconds: the budgets of these tests read this process's CPU time (``cpu_clock`` in
#: tests/conftest.py), so that a loaded machine does not cut an enumeration short.
TIMEOUT = 120

pytestmark = pytest.mark.usefixtures("cpu_clock")


def keys(enumeration: Any) -> set[tuple[Any, ...]]:
    reasons = list(enumeration)
    assert enumeration.complete, f"enumeration cut short by {enumeration.stopped_by}"
    out = {(r.kind, tuple(sorted((f, tuple(sorted(s))) for f, s in r.literals.items())), r.target) for r in reasons}
    assert len(out) == len(reasons), "duplicate reasons"
    return out


def compare(name: str, n_trees: int, depth: int, data_dir: Any = None, core: str = "python") -> None:
    data = datasets.load(name, data_dir)
    model = RandomForestClassifier(n_estimators=n_trees, max_depth=depth, random_state=0).fit(data.X, data.y)
    # the circuit engine explains the hard vote (the papers'); the soft vote is checked against
    # the oracle in test_soft_vote.py
    engines = {
        "sat": rx.Explainer(model, engine="sat", vote="hard"),
        "circuit": rx.Explainer(model, engine="circuit", vote="hard", core=core),
    }
    rows = np.random.default_rng(0).choice(len(data.X), size=INSTANCES, replace=False)
    for row in rows:
        x = data.X[row]
        d = {e: ex.explain(x) for e, ex in engines.items()}
        assert d["sat"].prediction == d["circuit"].prediction
        for query in (
            "sufficient_reasons",
            "necessary_reasons",
            "shortest_sufficient_reasons",
            "shortest_necessary_reasons",
        ):
            got = {e: keys(getattr(dec, query)(timeout=TIMEOUT)) for e, dec in d.items()}
            assert got["sat"] == got["circuit"], (name, row, query)
        assert d["sat"].robustness() == d["circuit"].robustness(), (name, row)
        for target in model.classes_:
            if target == d["sat"].prediction:
                continue
            got = {e: keys(dec.contrastive_reasons(target, timeout=TIMEOUT)) for e, dec in d.items()}
            assert got["sat"] == got["circuit"], (name, row, target)
        reverse = list(range(data.X.shape[1]))[::-1]
        for order in (None, reverse):  # the canonical single answers: features and literals
            assert d["sat"].sufficient_reason(order) == d["circuit"].sufficient_reason(order), (name, row)
            assert d["sat"].necessary_reason(order) == d["circuit"].necessary_reason(order), (name, row)
        reason = d["circuit"].sufficient_reason()
        assert rx.verify(reason, model).ok
    for ex in engines.values():
        ex.close()


#: the circuit engine's vote-counting cores
CORES = ["python", "compact"]


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("name, n_trees, depth", CASES)
def test_engines_agree_on_bundled_datasets(name: str, n_trees: int, depth: int, core: str) -> None:
    compare(name, n_trees, depth, core=core)


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("name, n_trees, depth", BENCHMARKS)
def test_engines_agree_on_benchmark_datasets(name: str, n_trees: int, depth: int, core: str) -> None:
    compare(name, n_trees, depth, datasets.benchmark_dir(), core=core)
