"""``HistGradientBoostingClassifier`` fitted on a DataFrame's string categories
(``categorical_features="from_dtype"`` on a ``category`` column, or an ``object`` column named
in ``categorical_features``; :mod:`rfexplain.core.boosted_import`): the feature's states are its
encoder's categories, named by them, then ``"(other)"`` (every unknown category) and the missing
state. Inputs are given in the user's columns (strings), and every call back into the model
gives it strings (:func:`rfexplain.core.instances.model_input`). The decision equals
``predict`` on every category, unknown ones and missing values; the SAT engine equals the oracle
and every reason verifies against ``predict``; the forest survives its JSON round trip."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

import rfexplain as rx
from rfexplain import Forest
from rfexplain.core.errors import InvalidInstanceError
from tests.boosted_checks import check_sat_equals_oracle

pd = pytest.importorskip("pandas")

COLOURS = ("red", "green", "blue", "cyan", "pink")
#: Values of the categorical column the model never saw, and missing values.
UNSEEN = ("gold", "", "(other)", None, np.nan)


def _frame(seed: int, n_classes: int = 2, rows: int = 300, nan: float = 0.1) -> tuple[Any, np.ndarray]:
    """A numeric column ``x``, a string column ``colour`` (a share ``nan`` missing) and a string
    column ``size``; the class depends on sets of colours and on ``x``."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows).round(2)
    colour = rng.choice(COLOURS, size=rows).astype(object)
    size = rng.choice(["S", "M", "L"], size=rows).astype(object)
    y = (np.isin(colour, ("red", "blue")) ^ (x > 0.3)).astype(int)
    if n_classes == 3:
        y = np.where((size == "L") & (x > 0), 2, y)
    gone = rng.random(rows) < nan
    colour[gone] = None
    y = np.where(gone & (rng.random(rows) < 0.8), (y + 1) % n_classes, y)
    return pd.DataFrame({"x": x, "colour": colour, "size": size}), y


def _fit(frame: Any, y: np.ndarray, dtype: str = "category", rounds: int = 8, depth: int = 3) -> Any:
    if dtype == "category":
        frame = frame.astype({"colour": "category", "size": "category"})
        features: Any = "from_dtype"
    else:
        features = ["colour", "size"]
    model = HistGradientBoostingClassifier(
        max_iter=rounds, max_depth=depth, categorical_features=features, random_state=0
    )
    return model.fit(frame, y)


def _every_value(frame: Any) -> Any:
    """Rows of ``frame`` with each categorical column set in turn to every category, to values
    the model never saw and to missing values."""
    rows = []
    for column, values in (("colour", (*COLOURS, *UNSEEN)), ("size", ("S", "M", "L", "XL", None))):
        for v in values:
            part = frame.iloc[:20].copy()
            part[column] = [v] * len(part)
            rows.append(part)
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize("dtype", ["category", "object"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_decides_as_predict_on_every_category_unknown_and_missing(dtype: str, n_classes: int) -> None:
    """States named by the categories (the encoder's order); the user's rows (strings, unknown
    strings, ``None``, NaN) decided as ``predict`` decides them; it was refused before."""
    frame, y = _frame(seed=n_classes, n_classes=n_classes)
    model = _fit(frame, y, dtype)
    forest = Forest.from_sklearn(model, missing="all")
    assert forest.categories[0] is None
    assert forest.categories[1] == ("blue", "cyan", "green", "pink", "red", "(other)", "(missing)")
    assert forest.categories[2] == ("L", "M", "S", "(other)", "(missing)")
    rows = _every_value(frame)
    assert (forest.predict(frame) == model.predict(frame)).all()
    assert (forest.predict(rows) == model.predict(rows)).all()
    typed = rows.astype({"colour": "string", "size": "string"})  # missing values as pandas.NA
    assert (forest.predict(typed) == model.predict(rows)).all()
    assert Forest.from_json(forest.to_json()) == forest


def test_values_given_as_codes_or_labels_read_alike() -> None:
    """A categorical value is a category, or its state index (the encoder's code); an unknown
    string is the ``"(other)"`` state, a number that is no integer is refused."""
    frame, y = _frame(seed=5, n_classes=3)
    forest = Forest.from_sklearn(_fit(frame, y), missing="all")
    named = forest.states({"x": 0.1, "colour": "pink", "size": "XL"})
    coded = forest.states(np.asarray([[0.1, 3.0, 7.0]]))
    assert named.tolist() == coded.tolist() == [[int(np.searchsorted(forest.thresholds[0], 0.1)), 3, 3]]
    with pytest.raises(InvalidInstanceError, match="integer"):
        forest.states(np.asarray([[0.1, 1.5, 0.0]]))
    with pytest.raises(InvalidInstanceError, match="number"):
        forest.states({"x": "high", "colour": "pink", "size": "S"})


def test_a_string_column_no_tree_tests_is_not_read() -> None:
    """A string column the model does not split on (no thresholds, not categorical in the
    forest) takes the user's strings all the same: its value is not read."""
    frame, y = _frame(seed=6, nan=0.0)
    model = _fit(frame.assign(size="S"), y, rounds=3)
    forest = Forest.from_sklearn(model)
    assert forest.categories[2] is None and not forest.thresholds[2]
    rows = frame.iloc[:30]
    assert (forest.predict(rows) == model.predict(rows)).all()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_sat_equals_oracle_with_string_categories(n_classes: int) -> None:
    """The engine contract on small models: every AXp, CXp and the robustness equal the oracle's,
    every reason verifies against ``predict`` (its witnesses given to it as strings)."""
    frame, y = _frame(seed=10 + n_classes, n_classes=n_classes)
    model = _fit(frame, y, rounds=3, depth=2)
    check_sat_equals_oracle(model, seed=n_classes, instances=4)


def test_explainer_takes_and_gives_the_users_columns() -> None:
    """The explainer takes rows of strings (a dict, a DataFrame row), decides them as ``predict``,
    names the categories in its reasons (verified by ``predict``) and gives witnesses back as
    strings."""
    frame, y = _frame(seed=20)
    model = _fit(frame, y, dtype="object", rounds=5)
    rows: list[Any] = [
        {"x": 0.1, "colour": "red", "size": "S"},
        {"x": 0.9, "colour": "violet", "size": "M"},
        {"x": -0.4, "colour": None, "size": "L"},
        frame.iloc[3],
    ]
    texts = []
    with rx.Explainer(model, engine="sat", missing="all") as explainer:
        for row in rows:
            decision = explainer.explain(row)
            given = pd.DataFrame([row]) if isinstance(row, dict) else row.to_frame().T
            assert decision.prediction == model.predict(given)[0]
            for reason in (decision.sufficient_reason(), decision.necessary_reason()):
                assert rx.verify(reason, model).ok, str(reason)
                texts.append(str(reason))
        back = explainer.original_rows([[0.1, 4.0, 0.0], [0.2, np.nan, 9.0]])
    assert any("colour in {" in text for text in texts)
    assert back["colour"].tolist()[0] == "red" and back["size"].tolist()[0] == "L"
    assert pd.isna(back["colour"].tolist()[1]) and pd.isna(back["size"].tolist()[1])


def test_the_command_line_reads_string_categories(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``rfexplain explain --input`` / ``--values`` and ``rfexplain batch --input`` on a model of
    string categories read its CSV cells as the user's strings (by the header's names), as the
    API does (an unknown string is the ``(other)`` state); a short row is its own error."""
    import json

    import joblib

    from rfexplain.cli import main

    frame, y = _frame(4)
    model = _fit(frame, y)
    model_path = tmp_path / "hgb.joblib"
    joblib.dump(model, model_path)
    rows = frame.iloc[:4].copy()
    rows.iloc[2, 1] = "gold"
    csv_path = tmp_path / "rows.csv"
    rows[["size", "x", "colour"]].to_csv(csv_path, index=False)  # columns matched by name
    explainer = rx.Explainer(model, engine="oracle")
    expected = [explainer.explain(rows.iloc[[k]]).sufficient_reason().to_dict() for k in range(4)]
    assert main(["batch", str(model_path), "--input", str(csv_path), "--engine", "oracle", "--no-progress"]) == 0
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [d["error"] for d in docs] == [None] * 4
    assert [d["result"] for d in docs] == [[e] for e in expected]  # a batch record holds a list of reasons
    html = tmp_path / "rows.html"
    assert main(["report", str(model_path), "--input", str(csv_path), "--engine", "oracle", "--out", str(html)]) == 0
    assert "gold" not in html.read_text() or "(other)" in html.read_text()
    capsys.readouterr()
    values = f"x={rows.iloc[0, 0]},colour={rows.iloc[0, 1]},size={rows.iloc[0, 2]}"
    assert main(["explain", str(model_path), "--values", values, "--engine", "oracle", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["prediction"] == docs[0]["prediction"]
    bad = tmp_path / "bad.csv"
    bad.write_text("x,colour,size\n0.5,red,S\n0.1,M\n")
    assert main(["batch", str(model_path), "--input", str(bad), "--engine", "oracle", "--no-progress"]) == 1
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert docs[0]["error"] is None and docs[1]["error"].startswith("InvalidInstanceError: row 1")


def test_flips_of_a_row_with_a_missing_or_unknown_category_read_its_state() -> None:
    """A row whose categorical value is missing (or a category the model never saw) is decided,
    printed and flipped: each change of its necessary reasons starts from the row's own state
    of the feature (its missing or ``(other)`` state), and ends in the witness's."""
    frame, y = _frame(5)
    model = _fit(frame, y)
    explainer = rx.Explainer(model, engine="oracle")
    rows = frame.iloc[:12].astype(object)
    rows.iloc[0, 1], rows.iloc[1, 1], rows.iloc[2, 1] = None, "gold", np.nan
    states = explainer.forest.states(rows)
    for k in range(len(rows)):
        d = explainer.explain(rows.iloc[[k]])
        assert str(d)  # printed with its actions
        for reason in d.necessary_reasons(limit=5):
            witness = explainer.forest.states(np.asarray([reason.witnesses[0].values]))[0]
            for change in reason.changes:
                assert change.before == states[k, change.feature]
                assert change.after == witness[change.feature]
