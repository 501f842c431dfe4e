"""The service's database: tables, engines with per-backend settings, migrations, repository.

SQLite in the data directory is the default; PostgreSQL is selected by URL. Modules:

* :mod:`app.db.base` - declarative base, naming convention, UTC timestamps;
* :mod:`app.db.models` - the tables;
* :mod:`app.db.engine` - engines and read/write transactions (SQLite pragmas, BEGIN IMMEDIATE);
* :mod:`app.db.migrate` - Alembic configured in code;
* :mod:`app.db.repository` - the queries the service runs (cache, claims, listing).
"""

# Imported here so that every user of Base.metadata (Alembic's env, the migration tests) sees
# the jobs tables too, whichever model module it imported first.
from app.db import feedback_models as feedback_models
from app.db import job_models as job_models
from app.db.engine import Database, make_engine

__all__ = ["Database", "make_engine"]
