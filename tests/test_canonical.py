"""Same question, same answer: the single reasons do not depend on history, batching,
parallelism, hash seeds, a JSON round trip of the forest, or the engine.

``sufficient_reason()`` is the AXp that deletion in feature order produces and
``necessary_reason()`` the CXp that fixing back in feature order produces (see
:mod:`rfexplain.engines.base`); ``tests/engine_contract.py`` checks both against a brute-force
deletion on random forests. Here: real forests, many instances, warm and fresh explainers,
``explain_many`` with several job counts and chunk sizes, and subprocesses with other hash seeds.
Witnesses are valid but engine-chosen, so records are compared without them.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx
from rfexplain.batch import BatchRecord
from rfexplain.engines import engine_class
from tests.engine_contract import _key, canonical_by_brute_force
from tests.hypothesis_budget import examples
from tests.strategies import forests_and_instances

X, Y = load_wine(return_X_y=True)
MODEL = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=3).fit(X, Y)
ROWS = X[::9]  # 20 instances
QUERIES = ("sufficient_reason", "necessary_reason")
ROOT = Path(__file__).resolve().parent.parent


def answers(decision: rx.Decision, order: Any = None) -> tuple[Any, Any]:
    return _key(decision.sufficient_reason(order)), _key(decision.necessary_reason(order))


def without_witnesses(records: list[BatchRecord]) -> list[Any]:
    out = []
    for r in records:
        assert r.ok, r.error
        out.append((r.index, r.prediction, [{k: v for k, v in d.items() if k != "witnesses"} for d in r.result]))
    return out


# the circuit engine explains the hard vote only (this forest's leaves are impure)
@pytest.mark.parametrize(("engine", "vote"), [("sat", "soft"), ("sat", "hard"), ("circuit", "hard")])
def test_warm_explainer_in_random_order_equals_a_fresh_one_per_instance(engine: str, vote: str) -> None:
    fresh = []
    for x in ROWS:
        with rx.Explainer(MODEL, engine=engine, vote=vote) as explainer:
            fresh.append(answers(explainer.explain(x)))
    order = list(range(len(ROWS)))
    random.Random(7).shuffle(order)
    with rx.Explainer(MODEL, engine=engine, vote=vote) as warm:
        for i in order:
            decision = warm.explain(ROWS[i])
            list(decision.necessary_reasons(limit=3))  # learned clauses, cores and caches in between
            assert answers(decision) == fresh[i], i
            list(decision.sufficient_reasons(limit=3))
            assert answers(decision) == fresh[i], i


def test_sat_and_circuit_give_the_same_single_answers_on_a_real_forest() -> None:
    reverse = list(range(X.shape[1]))[::-1]
    with (
        rx.Explainer(MODEL, engine="sat", vote="hard") as sat,
        rx.Explainer(MODEL, engine="circuit", vote="hard") as circuit,
    ):
        for x in ROWS:
            for order in (None, reverse):
                assert answers(sat.explain(x), order) == answers(circuit.explain(x), order)


@pytest.mark.parametrize("query", QUERIES)
def test_explain_many_records_do_not_depend_on_jobs_or_chunks(query: str) -> None:
    explainer = rx.Explainer(MODEL, engine="sat")
    sequential = without_witnesses(explainer.explain_many(ROWS, query, n_jobs=1))
    for chunk_size in (1, 3, 8):
        parallel = explainer.explain_many(ROWS, query, n_jobs=2, chunk_size=chunk_size)
        assert without_witnesses(parallel) == sequential, chunk_size
    explainer.close()


SCRIPT = """
import json, sys
import numpy as np
import rfexplain as rx
forest = rx.Forest.from_json(open(sys.argv[1]).read())
rows = np.asarray(json.load(open(sys.argv[2])), dtype=np.float32)
out = []
with rx.Explainer(forest, engine="sat") as explainer:
    for query in ("sufficient_reason", "necessary_reason"):
        for r in explainer.explain_many(rows, query, n_jobs=1):
            out.append([r.index, query, [{k: v for k, v in d.items() if k != "witnesses"} for d in r.result]])
print(json.dumps(out))
"""


@pytest.mark.slow
def test_answers_survive_hash_seeds_and_a_json_round_trip(tmp_path: Path) -> None:
    forest_file = tmp_path / "forest.json"
    forest_file.write_text(rx.Forest.from_sklearn(MODEL).to_json())
    rows_file = tmp_path / "rows.json"
    rows_file.write_text(json.dumps(ROWS.astype(np.float32).tolist()))
    script = tmp_path / "explain.py"
    script.write_text(SCRIPT)
    expected = []
    with rx.Explainer(MODEL, engine="sat") as explainer:
        for query in QUERIES:
            for r in explainer.explain_many(ROWS, query, n_jobs=1):
                expected.append([r.index, query, [{k: v for k, v in d.items() if k != "witnesses"} for d in r.result]])
    expected = json.loads(json.dumps(expected))
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, str(script), str(forest_file), str(rows_file)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=True,
        )
        assert json.loads(done.stdout) == expected, seed


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(forests_and_instances(), st.randoms(use_true_random=False))
def test_sat_circuit_and_oracle_give_the_same_single_answers(case: Any, rnd: random.Random) -> None:
    forest, instance = case
    order = list(range(forest.n_features))
    rnd.shuffle(order)
    engines = [engine_class(name)(forest) for name in ("sat", "circuit", "oracle")]
    try:
        for o in (None, order):
            expected_axp, expected_cxp = canonical_by_brute_force(forest, instance, o)
            got = {(_key(e.sufficient_reason(instance, o)), _key(e.necessary_reason(instance, o))) for e in engines}
            assert got == {
                (("sufficient", expected_axp), None if expected_cxp is None else ("necessary", expected_cxp))
            }
    finally:
        for e in engines:
            e.close()


@pytest.mark.parametrize("vote", ["hard", "soft"])
@pytest.mark.parametrize("prefilter", [True, False])
@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(data=st.data(), rnd=st.randoms(use_true_random=False))
def test_the_axp_dropping_features_in_blocks_is_plain_deletions(
    vote: str, prefilter: bool, data: Any, rnd: random.Random
) -> None:
    """Blocks after every successful deletion (``axp_block_after=1``, the most block calls):
    the SAT engine's AXp is still the one plain deletion in that order gives, with valid
    witnesses (the engine checks each against the forest's own decision)."""
    from rfexplain.sat.engine import SatEngine

    forest, instance = data.draw(forests_and_instances(vote=vote, max_features=6))
    order = list(range(forest.n_features))
    rnd.shuffle(order)
    with SatEngine(forest, prefilter=prefilter, tuning={"axp_block_after": 1}) as engine:
        for o in (None, order):
            expected_axp, _ = canonical_by_brute_force(forest, instance, o)
            assert _key(engine.sufficient_reason(instance, o)) == ("sufficient", expected_axp)


def test_blocks_change_the_calls_not_the_axps_on_a_real_forest(monkeypatch: Any) -> None:
    """On a 13-feature forest: the AXps with blocks (after one, or three, successful deletions)
    are those without, and the blocks were taken (fewer or other calls)."""
    from rfexplain.sat.deciders.portfolio import Portfolio

    calls: list[int] = []
    real = Portfolio.decide

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls[-1] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Portfolio, "decide", counted)
    results = {}
    for after in (0, 1, 3):
        calls.append(0)
        with rx.Explainer(MODEL, engine="sat", vote="hard", tuning={"axp_block_after": after}) as explainer:
            results[after] = [_key(explainer.explain(x).sufficient_reason()) for x in X[::3]]
    assert results[1] == results[0] and results[3] == results[0]
    assert calls[1] != calls[0]
