"""``rfexplain demo --pipeline``: a scikit-learn pipeline explained in its original columns.

Trains ``ColumnTransformer(OneHotEncoder, StandardScaler) -> RandomForestClassifier`` on the
built-in loans table (:func:`rfexplain.datasets.loans`) and explains a few test applications:
sufficient reasons as ``credit_history in {good, fair}`` and ``income > 31450``, necessary
reasons with age held fixed (``immutable=["age"]``) and within the data's ranges
(``bounds="data"``), and each witness checked by the pipeline's own ``predict`` (the soft vote the
forest explains, ``vote="auto"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["run_pipeline_demo", "loans_pipeline"]

NUMERIC = ["age", "income", "loan_amount", "years_employed"]
CATEGORICAL = ["employment", "housing", "purpose", "credit_history"]


def loans_pipeline(trees: int = 10, depth: int = 4, seed: int = 0) -> tuple[Any, Any, Any]:
    """``(pipeline, X_test, y_test)``: the demo's pipeline fitted on 80% of the loans table."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from rfexplain.datasets import loans

    X, y = loans()
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y)
    prep = ColumnTransformer(
        [("cat", OneHotEncoder(handle_unknown="ignore"), CATEGORICAL), ("num", StandardScaler(), NUMERIC)]
    )
    forest = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed)
    pipeline = Pipeline([("prep", prep), ("forest", forest)]).fit(X_train, y_train)
    return pipeline, X_test, y_test


def run_pipeline_demo(n_instances: int = 3, write: Callable[[str], None] = print) -> int:
    """Run the demo, writing lines through ``write``; returns 1 if a witness fails its check."""
    from rfexplain.core.pyvalues import to_python
    from rfexplain.datasets import loans
    from rfexplain.explainer import Explainer
    from rfexplain.pipelines import PipelineModel

    pipeline, X_test, _ = loans_pipeline()
    X, _ = loans()
    write("rfexplain demo --pipeline: loans.csv, ColumnTransformer(OneHotEncoder, StandardScaler) -> RandomForest")
    explainer = Explainer(pipeline, engine="sat")
    held = Explainer(pipeline, engine="sat", bounds="data", data=X, immutable=["age"])
    model = explainer.pipeline
    assert isinstance(model, PipelineModel)
    write(f"forest over the original columns: {explainer.forest!r}")
    failures = 0
    for k in range(min(n_instances, len(X_test))):
        row = X_test.iloc[k]
        decision = explainer.explain(row)
        constrained = held.explain(row)
        write("")
        write("application: " + ", ".join(f"{name} = {value}" for name, value in row.items()))
        write(f"  decision: approved = {decision.prediction} (pipeline.predict: {decision.sklearn_prediction})")
        write(f"  sufficient reason: {decision.sufficient_reason()}")
        for reason in constrained.necessary_reasons(limit=3):
            write(f"  necessary reason, age fixed: {reason}")
            for witness in reason.witnesses:
                frame = explainer.original_rows(witness.values)
                decided = int(model.decides(frame)[0])  # pipeline.predict, the vote explained
                ok = decided == witness.prediction or model.near_tie(frame, decided, witness.prediction)
                failures += not ok
                changed = {c: to_python(frame[c].iloc[0]) for c in frame.columns if frame[c].iloc[0] != row[c]}
                write(f"    witness ({'checked by the pipeline' if ok else 'FAILED'}): change {changed}")
    return 1 if failures else 0
