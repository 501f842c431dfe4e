"""Defaults and limits of a search request, in a module that imports nothing.

The ``tiler`` command line states them in its options (``tiler tune --help``) before it knows
whether a search runs: keeping them here lets ``tiler evaluate`` and ``tiler --help`` start
without loading the search and the model.
"""

from __future__ import annotations

#: Optuna trials after screening when the request does not say (keeps a typical tune near 1 s).
DEFAULT_BUDGET = 16
#: The largest budget one request may ask for.
MAX_BUDGET = 5000
#: The most candidates one request may ask for (the route answers 422 above it).
MAX_TOP_K = 20
