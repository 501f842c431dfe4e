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


def test_flags_without_a_budget_answer_as_a_request_without_one(tmp_path: Path) -> None:
    """The flags' default budget is the request's: its study stops early on a large kernel.

    910B2 fp16 4096^3 reaches the default study's simulated-instruction cap after 8 trials; an
    explicit ``--budget 16`` runs all 16 (and a JSONL line without a budget stops as the flags do).
    """
    shape = ["--soc", "Ascend910B2", "--m", "4096", "--n", "4096", "--k", "4096"]
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"problem": {"m": 4096, "n": 4096, "k": 4096}}) + "\n")
    code, by_flags = run(shape)
    assert code == 0
    code, by_line = run(["--jsonl", str(src)])
    assert code == 0
    code, explicit = run([*shape, "--budget", "16"])
    assert code == 0
    assert by_flags[0]["search"]["trials"] == by_line[0]["search"]["trials"] < 16
    assert by_flags[0]["tiling"] == by_line[0]["tiling"]
    assert explicit[0]["search"]["trials"] == 16
