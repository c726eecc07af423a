"""Progress of long single-answer queries: the SAT engine's deletion loops report their steps
through the query's budget, and ``Explainer(progress=...)`` draws them as a bar on stderr."""

from __future__ import annotations

import io

import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx
from rfexplain import progress
from rfexplain.core.budget import Budget
from rfexplain.progress import StepProgress

DATA = load_breast_cancer()
MODEL = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(DATA.data, DATA.target)
#: The features the deletion loops decide: those the trees test (the others have one state).
N = sum(1 for k in rx.Forest.from_sklearn(MODEL).states_per_feature if k > 1)


@pytest.mark.parametrize("query", ["sufficient_reason", "necessary_reason"])
def test_sat_deletion_loops_report_every_feature(query: str) -> None:
    decision = rx.Explainer(MODEL, engine="sat").explain(DATA.data[0])
    steps: list[tuple[int, int]] = []
    budget = Budget()
    budget.on_step = lambda done, total: steps.append((done, total))
    with budget.active():
        getattr(decision.engine, query)(decision.instance)
    assert steps[-1] == (N, N)
    assert [done for done, _ in steps] == sorted(done for done, _ in steps)
    assert {total for _, total in steps} == {N}


def test_step_bar_when_asked_and_only_past_its_delay(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = rx.Explainer(MODEL, engine="sat").explain(DATA.data[0]).sufficient_reason()
    assert capsys.readouterr().err == ""  # stderr is not a terminal: no bar by default
    monkeypatch.setattr(progress, "STEP_BAR_DELAY", 0.0)
    shown = rx.Explainer(MODEL, engine="sat", progress=True).explain(DATA.data[0])
    assert shown.sufficient_reason() == plain  # the bar changes nothing in the answer
    err = capsys.readouterr().err
    assert "sufficient_reason (sat)" in err and f"{N}/{N}" in err
    shown.necessary_reason()
    assert f"{N}/{N}" in capsys.readouterr().err
    rx.Explainer(MODEL, engine="sat", progress=False).explain(DATA.data[0]).sufficient_reason()
    assert capsys.readouterr().err == ""
    held = rx.Explainer(MODEL, engine="sat", progress=True, immutable=["x0", "x1"])
    held.explain(DATA.data[0]).necessary_reason()
    assert "necessary_reason (sat)" in capsys.readouterr().err


def test_step_bar_waits_for_its_delay() -> None:
    out = io.StringIO()
    bar = StepProgress("q", enabled=True, stream=out, delay=3600.0)
    with bar.following(budget := Budget()):
        budget.step(1, 2)
        budget.step(2, 2)
    assert out.getvalue() == ""
    assert budget.on_step is None


def test_batches_and_reports_draw_no_step_bars(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    """A batch or a report draws its own bar: the queries it runs draw none, even when the
    explainer asks for them (in this process, n_jobs=1)."""
    monkeypatch.setattr(progress, "STEP_BAR_DELAY", 0.0)
    explainer = rx.Explainer(MODEL, engine="sat", progress=True)
    explainer.explain_many(DATA.data[:2], "necessary_reason", n_jobs=1, progress=False)
    assert capsys.readouterr().err == ""
    held = rx.Explainer(MODEL, engine="sat", progress=True, immutable=["x0"])
    held.report(DATA.data[:2], tmp_path / "r.html", plots=False, progress=False)
    assert capsys.readouterr().err == ""
    decision = held.explain(DATA.data[0])
    decision.progress = False
    decision.necessary_reason()  # held features: the query runs on the held forest's decision
    assert capsys.readouterr().err == ""
