"""The Dockerfile, checked without a Docker engine: what it installs and what it runs."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

from tests.app._server import REPO

DOCKERFILE = (REPO / "Dockerfile").read_text()


def _instructions(name: str) -> list[str]:
    # Join continuation lines, then pick the instructions of one kind.
    text = re.sub(r"\\\n", " ", DOCKERFILE)
    return [line.split(None, 1)[1] for line in text.splitlines() if line.startswith(name + " ")]


def test_multi_stage_and_non_root_with_a_data_volume() -> None:
    stages = _instructions("FROM")
    assert len(stages) == 2
    assert stages[0].endswith("AS builder")
    assert "COPY --from=builder" in DOCKERFILE
    users = _instructions("USER")
    assert users and users[-1] not in ("root", "0")
    assert json.loads(_instructions("VOLUME")[0]) == ["/data"]
    assert "TILER_DATA_DIR=/data" in DOCKERFILE


def test_install_steps_use_the_lock_file_without_dev_tools_or_torch() -> None:
    syncs = [run for run in _instructions("RUN") if "uv sync" in run]
    assert len(syncs) == 2
    for run in syncs:
        assert "--frozen" in run
        assert "--no-dev" in run
        assert "--no-group gp" in run
    # The lock file is what the build installs from.
    assert "source=uv.lock" in syncs[0]
    assert "COPY pyproject.toml uv.lock" in DOCKERFILE


def test_the_locked_install_set_resolves_and_leaves_torch_and_pytest_out() -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    # The same selection as the image's `uv sync --frozen --no-dev --no-group gp`; --frozen
    # fails if the lock cannot serve it.
    out = subprocess.run(
        [uv, "export", "--frozen", "--no-dev", "--no-group", "gp", "--no-hashes"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    names = {re.split(r"[=; ]", line.strip())[0] for line in out.splitlines() if "==" in line}
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for dep in project["dependencies"]:
        assert re.split(r"[<>=\[ ]", dep)[0].lower() in names
    assert "torch" not in names
    assert "pytest" not in names


def test_entrypoint_is_tiler_serve_on_all_interfaces_and_exists() -> None:
    entrypoint = json.loads(_instructions("ENTRYPOINT")[0])
    assert entrypoint == ["tiler", "serve", "--host", "0.0.0.0"]
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["tiler"] == "app.cli:main"
    cmd = json.loads(_instructions("CMD")[0])
    # The command the image runs accepts exactly these options.
    help_text = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for option in [*entrypoint[2:], *cmd]:
        if option.startswith("--"):
            assert option in help_text


def test_healthcheck_probes_healthz_with_python_only() -> None:
    health = _instructions("HEALTHCHECK")[0]
    exec_form = json.loads(health.split("CMD", 1)[1])
    assert exec_form[:2] == ["python", "-c"]
    ast.parse(exec_form[2])  # valid Python
    assert "/healthz" in exec_form[2]
    assert "curl" not in health


def test_dockerignore_keeps_local_state_out() -> None:
    ignored = (REPO / ".dockerignore").read_text().split()
    for entry in (".venv", "data", "tests", ".git"):
        assert entry in ignored
