"""The search: TCubeTiling space, screening, Optuna study, baselines and explanations."""

from __future__ import annotations

from tiler.explain import explain_tiling
from tiler.tune import TuneRequest, canonical_request, parse_tune_request, tune

__all__ = ["TuneRequest", "canonical_request", "explain_tiling", "parse_tune_request", "tune"]
