"""Seeing explanations: plots, an HTML report, notebook display and DataFrames of results.

Front ends only: nothing in the core or the engines imports this package. matplotlib
(``rfexplain[plot]``), pandas (``rfexplain[frames]``) and pyarrow (``rfexplain[parquet]``) are
imported when first needed, and a missing one raises :class:`MissingExtraError` naming the extra.
"""

from rfexplain.core.display import register_renderer
from rfexplain.viz.extras import MissingExtraError
from rfexplain.viz.frames import frame_to_records, records_to_frame, write_parquet
from rfexplain.viz.long_frame import records_to_long_frame
from rfexplain.viz.notebook import enumeration_html, enumeration_text, reason_html
from rfexplain.viz.plot import (
    DecisionDisplay,
    ReasonDisplay,
    RelevanceDisplay,
    plot_decision,
    plot_feature_relevance,
    plot_reason,
)
from rfexplain.viz.report import write_report
from rfexplain.viz.run_metadata import parquet_metadata, run_metadata

__all__ = [
    "DecisionDisplay",
    "MissingExtraError",
    "ReasonDisplay",
    "RelevanceDisplay",
    "frame_to_records",
    "parquet_metadata",
    "plot_decision",
    "plot_feature_relevance",
    "plot_reason",
    "records_to_frame",
    "records_to_long_frame",
    "run_metadata",
    "write_parquet",
    "write_report",
]

register_renderer("plot_reason", plot_reason)
register_renderer("reason_html", reason_html)
register_renderer("enumeration_html", enumeration_html)
register_renderer("enumeration_text", enumeration_text)
