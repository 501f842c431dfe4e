"""Fixtures of the pipeline tests."""

from __future__ import annotations

import os

import pytest

from tests.support.shared_sims import SharedSimulations


@pytest.fixture(scope="session")
def shared_sims(tmp_path_factory: pytest.TempPathFactory) -> SharedSimulations:
    """Simulations shared by the processes of this test run (:mod:`tests.support.shared_sims`).

    Under xdist each worker's base temporary directory is a child of the run's, so the parent is
    the run's own directory: the xdist documentation's recipe for work done once per run.
    """
    base = tmp_path_factory.getbasetemp()
    run_dir = base.parent if "PYTEST_XDIST_WORKER" in os.environ else base
    return SharedSimulations(run_dir / "shared-simulations")
