"""The README is a user's guide that stays true: short, complete, and its examples run.

Its settings table is compared with the settings' defaults, its problem keys with the problem
model, and its HTTP examples are run, as pasted, against a real server.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import Settings
from simcore.tiling.problem import Problem
from tests.app._server import REPO, Server, running_server

README = (REPO / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.M | re.S)


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def test_the_readme_is_short_and_points_to_the_docs() -> None:
    assert len(README.splitlines()) <= 300
    for doc in ("docs/model.md", "docs/estimator.md", "docs/search.md"):
        assert doc in README
    for doc in ("docs/calibration.md", "docs/benchmarks.md", "docs/service.md", "CHANGELOG.md"):
        assert doc in README
        assert (REPO / doc).is_file(), doc
    # History lives in the changelog, figures in docs/benchmarks.md.
    assert not re.search(r"[Mm]odel 2026\.\d+\.\d+", README)


def test_every_problem_key_is_documented() -> None:
    table = _section("Command line")
    for name in Problem.model_fields:
        assert f"`{name}`" in table, name


def _default(text: str) -> object:
    value = text.strip("`")
    if value == "unset":
        return None
    if value in ("true", "false"):
        return value == "true"
    try:
        return float(value)
    except ValueError:
        return value


def test_the_settings_table_is_the_settings() -> None:
    rows = re.findall(r"^\| `TILER_(\w+)` \| ([^|]+) \|", _section("Settings"), flags=re.M)
    documented = {name.lower(): _default(default.strip()) for name, default in rows}
    assert set(documented) == set(Settings.model_fields)
    for name, field in Settings.model_fields.items():
        actual = field.default
        if isinstance(actual, Path):
            actual = str(actual)
        elif isinstance(actual, int | float) and not isinstance(actual, bool):
            actual = float(actual)
        assert documented[name] == actual, name


def test_json_examples_are_one_object_per_line() -> None:
    blocks = _blocks("json")
    assert blocks
    for block in blocks:
        for line in block.splitlines():
            assert isinstance(json.loads(line), dict), line


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {"TILER_SEARCH_EXECUTOR": "thread", "TILER_DEFAULT_BUDGET": "0"}
    with running_server(tmp_path_factory.mktemp("readme"), env, "readme") as srv:
        yield srv


def test_the_http_examples_work_when_pasted(server: Server, tmp_path: Path) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    (script,) = [b for b in _blocks("bash") if "localhost:8000/v1/tilings:tune" in b]
    host = server.url.removeprefix("http://")
    # As pasted, against this test's server; a failed request fails the line.
    script = re.sub(
        r"\bcurl -s", "curl --fail-with-body -s", script.replace("localhost:8000", host)
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr + done.stdout[-2000:]
    out = done.stdout
    assert '"cached":true' in out  # the second tune is the first one again
    assert "SetTCubeTiling" in out  # the C++ export
    assert (tmp_path / "timeline.svg").read_text().startswith("<svg")
    assert '"valid":false' in out and "L0A_CAPACITY" in out  # baseM 512 overflows L0A
    assert "event: finished" in out  # the job ran, on the server's own worker
    assert '"status":"succeeded"' in out
