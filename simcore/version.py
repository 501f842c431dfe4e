"""The version of the performance model.

Bump MODEL_VERSION whenever a change alters any prediction (a formula, a constant in
``simcore/data``, a preset). Cached tuning results carry the version that produced them and are
never served under another one.
"""

from __future__ import annotations

MODEL_VERSION = "2026.11.30.1"
