"""The project installs anywhere: its install files name no file of one machine.

``pyproject.toml`` and ``uv.lock`` are what ``uv run --frozen`` installs from on a fresh clone; a
dependency taken from an absolute path or a ``file://`` URL exists on one machine only, and the
README's commands stop within a second everywhere else (``Distribution not found at ...``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from tests.app._server import REPO

#: A string that points into a local file system: POSIX or Windows absolute, or a file URL.
_LOCAL = re.compile(r"^(/|~|[A-Za-z]:[\\/]|\\\\)|file:", re.IGNORECASE)


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string of a TOML document with its dotted location."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


@pytest.mark.parametrize("name", ["pyproject.toml", "uv.lock"])
def test_no_dependency_comes_from_a_local_path(name: str) -> None:
    text = (REPO / name).read_text(encoding="utf-8")
    assert "file://" not in text.lower()
    local = [
        f"{where} = {value!r}"
        for where, value in _strings(tomllib.loads(text), "")
        if _LOCAL.search(value)
    ]
    assert local == [], f"{name} names local files: {local[:5]}"


def test_the_gp_group_is_optional_and_the_default_install_has_no_torch() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    groups = project["dependency-groups"]
    assert any(req.startswith("torch") for req in groups["gp"])
    # Optional: not installed unless asked for (`uv sync --group gp`).
    assert "gp" not in project["tool"]["uv"].get("default-groups", [])
    for name in project["tool"]["uv"].get("default-groups", []):
        assert not any(req.startswith("torch") for req in groups[name])
    # scipy is a serving dependency since calibration profiles (tiler/calibrate.py fits them
    # with its bounded least squares); torch, the GP sampler's, stays optional.
    assert not any(req.startswith("torch") for req in project["project"]["dependencies"])
