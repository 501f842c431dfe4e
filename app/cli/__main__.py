"""``python -m app.cli``: the ``tiler`` command."""

from app.cli.main import main

main()
