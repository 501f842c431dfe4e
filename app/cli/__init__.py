"""The ``tiler`` command line (``app.cli:main`` is the console script; ``python -m app.cli``)."""

from app.cli.main import cli, main

__all__ = ["cli", "main"]
