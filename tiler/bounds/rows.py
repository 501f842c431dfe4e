"""Per-group figures taken at some of the groups (the bounds are elementwise over the groups)."""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any

import numpy as np

__all__ = ["TAKE_ALL", "take_rows"]

#: A bound over a block's groups is priced at every group (the figures as they are) where at
#: least this share of them needs it, and at those only otherwise (taking them copies some
#: hundred arrays): a data path and iterate order's tiers after its fixed price.
TAKE_ALL = 0.75


def take_rows(value: Any, rows: Any, size: int) -> Any:
    """``value`` at the groups ``rows``: every per-group array in it (of length ``size``) taken.

    (Nothing is copied where ``rows`` is every group.)

    Walks dicts, tuples, lists and dataclasses; scalars (figures the same for every group) are
    kept as they are.
    """
    if rows.shape[0] == size:
        return value
    if isinstance(value, np.ndarray):
        return value[rows] if value.ndim >= 1 and value.shape[0] == size else value
    if isinstance(value, dict):
        return {key: take_rows(v, rows, size) for key, v in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(take_rows(v, rows, size) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return replace(
            value, **{f.name: take_rows(getattr(value, f.name), rows, size) for f in fields(value)}
        )
    return value
