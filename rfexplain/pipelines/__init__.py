"""Explaining scikit-learn pipelines in the user's own columns (see :mod:`.translate`)."""

from rfexplain.pipelines.reading import MISSING, OTHER, SUPPORTED_STEPS
from rfexplain.pipelines.translate import PipelineModel, is_transforming_pipeline

__all__ = ["PipelineModel", "is_transforming_pipeline", "OTHER", "MISSING", "SUPPORTED_STEPS"]
