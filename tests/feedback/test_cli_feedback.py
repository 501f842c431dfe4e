"""The feedback commands of the tiler CLI, run as real processes on a real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.app._server import REPO
from tests.feedback.test_feedback_api import SHARED_CSV
from tiler.topk import KERNEL_FIELDS

TUNE = ["tune", "--soc", "Ascend910B2", "--m", "256", "--n", "256", "--k", "256", "--budget", "0"]


def _run(args: list[str], tmp_path: Path) -> tuple[int, Any]:
    env = {**os.environ, "TILER_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.run(
        [sys.executable, "-m", "app.cli", *args], cwd=REPO, env=env, capture_output=True,
        text=True, timeout=600, check=False,
    )  # fmt: skip
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, proc.stderr
    return proc.returncode, json.loads(lines[-1])


def _csv_row(tiling: dict[str, int], device_us: float) -> str:
    header = ("case,soc,m,n,k,dtype,usedCoreNum,singleCoreM,singleCoreN,baseM,baseN,baseK,"
              "depthA1,depthB1,stepM,stepN,stepKa,stepKb,iterateOrder,dbL0A,dbL0B,dbL0C,"
              "task_duration_us")  # fmt: skip
    fields = header.split(",")[6:-1]
    cells = ["mine", "Ascend910B2", "256", "256", "256", "fp16"]
    cells += [str(tiling[f]) for f in fields] + [str(device_us)]
    return header + "\n" + ",".join(cells) + "\n"


def test_tune_top_k_measured_answer_and_source_model(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db' / 'tiler.db'}"
    code, answer = _run([*TUNE, "--top-k", "3"], tmp_path)
    assert code == 0
    cands = answer["candidates"]
    assert len(cands) == 3
    assert len({tuple(c["tiling"][f] for f in KERNEL_FIELDS) for c in cands}) == 3
    other = next(c for c in cands if not c["answer"])
    csv_file = tmp_path / "mine.csv"
    csv_file.write_text(_csv_row(other["tiling"], 0.5 * answer["estimate"]["time_us"]))
    code, imported = _run(["measurements", "import", str(csv_file), "--url", url], tmp_path)
    assert code == 0 and len(imported["items"]) == 1
    code, measured = _run([*TUNE, "--database", url], tmp_path)
    assert code == 0
    assert measured["source"] == "measured"
    assert measured["tiling"] == other["tiling"]
    assert measured["measurement"]["id"] == imported["items"][0]["id"]
    assert measured["model_answer"]["tiling"] == answer["tiling"]
    code, model = _run([*TUNE, "--database", url, "--source", "model"], tmp_path)
    assert model["source"] == "model" and model["tiling"] == answer["tiling"]


def test_a_bad_csv_stores_nothing_and_calibrate_fits_the_shared_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db' / 'tiler.db'}"
    bad = tmp_path / "bad.csv"
    lines = SHARED_CSV.read_text().splitlines()
    bad.write_text("\n".join([lines[0], lines[1].replace(",ND,ND,", ",ND,XX,", 1)]) + "\n")
    code, out = _run(["measurements", "import", str(bad), "--url", url], tmp_path)
    assert code == 1
    assert (out["error"]["row"], out["error"]["column"]) == (1, "format_b")
    code, cal = _run(
        ["calibrate", "--soc", "Ascend910B1", "--csv", str(SHARED_CSV), "--url", url,
         "--activate"], tmp_path,
    )  # fmt: skip
    assert code == 0, cal
    assert cal["imported"]["stored"] == 8, "the bad file stored nothing before"
    assert cal["status"] == "done" and cal["active"] is True
    cv = cal["report"]["errors"]["cross_validation"]
    assert cv["after"]["median_abs_error"] < cv["before"]["median_abs_error"]
