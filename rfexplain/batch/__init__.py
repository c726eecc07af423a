"""Explaining many instances at once, in parallel processes or on a Dask cluster.

:meth:`rfexplain.Explainer.explain_many` (a list in the order of the rows) and
:meth:`rfexplain.Explainer.iter_explain` (the records one by one as they finish) are the entry
points; this package holds the machinery, one module per step:

- :mod:`~rfexplain.batch.plan`: the arguments and rows checked before any work, a bad row
  becoming its own error record;
- :mod:`~rfexplain.batch.runner`: :func:`iter_explain` and :func:`explain_many`, in this process
  or through the pool, and :class:`BatchInterrupted`, the Ctrl-C that keeps every finished record;
- :mod:`~rfexplain.batch.pool`: the joblib worker pool (processes or Dask), with workers that
  die or overrun their deadline retried instance by instance;
- :mod:`~rfexplain.batch.worker`: what a worker runs: the engine built once from an
  :class:`EngineSpec`, one record per instance (``timeout`` is each instance's own wall-clock
  budget, polled by the engines);
- :mod:`~rfexplain.batch.formats`: records as JSON lines and CSV;
- :mod:`~rfexplain.batch.streaming`: :class:`StreamingOutput`, the output file of
  ``rfexplain batch -o``, written record by record and resumable.

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> from rfexplain import Explainer
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
>>> records = Explainer(model, engine="oracle").explain_many(X[:4], n_jobs=1)
>>> [r.index for r in records], records[0].complete, records[0].error
([0, 1, 2, 3], True, None)
"""

from rfexplain.batch.formats import CSV_COLUMNS, csv_row, records_to_text, write_csv, write_jsonl
from rfexplain.batch.plan import index_labels
from rfexplain.batch.pool import BUILD_GRACE, GRACE, task_deadline
from rfexplain.batch.runner import BatchInterrupted, explain_many, iter_explain
from rfexplain.batch.streaming import PARTIAL_SUFFIX, RUN_SUFFIX, ResumeError, StreamingOutput
from rfexplain.batch.worker import EngineSpec, ExplainerLike
from rfexplain.core.records import BatchRecord, row_error

__all__ = [
    "BatchRecord",
    "EngineSpec",
    "ExplainerLike",
    "explain_many",
    "iter_explain",
    "BatchInterrupted",
    "index_labels",
    "row_error",
    "task_deadline",
    "GRACE",
    "BUILD_GRACE",
    "write_jsonl",
    "write_csv",
    "csv_row",
    "records_to_text",
    "CSV_COLUMNS",
    "StreamingOutput",
    "ResumeError",
    "RUN_SUFFIX",
    "PARTIAL_SUFFIX",
]
