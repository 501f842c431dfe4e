"""`tiler tune` as a real process: flags, JSONL lines, errors per line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(args: list[str]) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    proc = subprocess.run(
        [sys.executable, "-m", "app.cli", "tune", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return proc.returncode, [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]


def test_jsonl_lines_and_errors(tmp_path: Path) -> None:
    good = {"problem": {"m": 128, "n": 256, "k": 256}, "fixed": {"baseN": 128}, "budget": 2}
    bad = {"problem": {"m": 128, "n": 256, "k": 256}, "fixed": {"baseM": 4096}}
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join([json.dumps(good), "{oops", json.dumps(bad)]) + "\n")
    code, out = run(["--jsonl", str(src)])
    assert code == 1
    assert len(out) == 3
    assert out[0]["tiling"]["baseN"] == 128
    for key in ("estimate", "baselines", "certificate", "explanation", "search"):
        assert key in out[0]
    assert out[1]["line"] == 2 and out[1]["error"]["rule"] == "malformed_json"
    assert out[2]["line"] == 3 and out[2]["error"]["field"] == "fixed.baseM"


def test_flags_and_svg(tmp_path: Path) -> None:
    svg = tmp_path / "answer.svg"
    code, out = run(["--m", "32", "--n", "48", "--k", "64", "--dtype", "bf16", "--fixed",
                     "dbL0C=1", "--budget", "0", "--svg", str(svg)])  # fmt: skip
    assert code == 0
    assert out[0]["tiling"]["dbL0C"] == 1
    assert out[0]["certificate"]["exact"] is True
    assert svg.read_text().lstrip().startswith("<")
