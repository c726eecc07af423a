"""
Many instances at once
======================

:meth:`~rfexplain.Explainer.explain_many` runs one query on many rows (in processes with
``n_jobs``, or on a Dask cluster) and gives one record per row; ``as_frame=True`` gives them as a
pandas DataFrame. :func:`rfexplain.viz.plot_feature_relevance` then shows how often each feature
is in the reasons. Here: the sufficient reasons of wine's test rows (a forest of 30 trees of
depth 4).
"""

import rfexplain as rx
from rfexplain.datasets import train_forest

trained = train_forest("wine", trees=30, depth=4, test_size=0.2)
explainer = rx.Explainer(trained.model, engine="sat", feature_names=trained.data.feature_names)
records = explainer.explain_many(trained.X_test, "sufficient_reason", n_jobs=1, timeout=10)
for r in records[:5]:  # each reason comes as a dict, with its text
    print(r.index, r.prediction, f"{r.time:.3f} s:", r.reasons[0]["text"])

# %%
# As a table:
frame = explainer.explain_many(trained.X_test[:8], "robustness", n_jobs=1, as_frame=True)
print(frame.drop(columns=[c for c in frame.columns if frame[c].isna().all()]).to_string(max_colwidth=40))

# %%
# Which features the reasons rely on:
display = rx.viz.plot_feature_relevance(records)  # a RelevanceDisplay
