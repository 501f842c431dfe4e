"""Alembic migrations of the service's database (run them with ``tiler db upgrade``)."""
