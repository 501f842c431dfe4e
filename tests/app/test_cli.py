"""The tiler CLI contract, run as a real process."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from simcore.hardware.presets import list_socs, load_preset

GOOD = {
    "problem": {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096, "dtype": "fp16"},
    "tiling": {"usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 768, "baseM": 128,
               "baseN": 256, "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1,
               "stepN": 1, "stepKa": 8, "stepKb": 4},
}  # fmt: skip


def run_cli(args: list[str], lines: list[str], tmp_path: Path) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "app.cli", *args, "--jsonl", str(src)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, out


def test_evaluate_prints_one_object_per_line_with_the_estimate(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(GOOD))
    bad["tiling"]["baseM"] = 512  # L0A: 512 * 64 * 2 * 2 > 64 KiB
    code, out = run_cli(["evaluate"], [json.dumps(GOOD), json.dumps(bad)], tmp_path)
    assert code == 0
    assert len(out) == 2
    est = out[0]["estimate"]
    assert out[0]["valid"] is True
    for key in ("time_us", "tflops", "bottleneck", "sequential_bound_us", "resource_bound_us"):
        assert key in est
    assert est["simulated"] is True
    assert est["resource_bound_us"] <= est["time_us"] <= est["sequential_bound_us"]
    assert out[1]["valid"] is False
    assert "estimate" not in out[1]
    assert any(v["id"] == "L0A_CAPACITY" for v in out[1]["violations"])


def test_bad_lines_name_the_field_and_processing_goes_on(tmp_path: Path) -> None:
    unknown_key = {"problem": {**GOOD["problem"], "colour": "red"}, "tiling": GOOD["tiling"]}
    unknown_soc = {"problem": {**GOOD["problem"], "soc": "Ascend999"}, "tiling": GOOD["tiling"]}
    fp32_on_910a = {"problem": {**GOOD["problem"], "soc": "Ascend910A", "dtype": "fp32"},
                    "tiling": GOOD["tiling"]}  # fmt: skip
    non_int = {"problem": GOOD["problem"], "tiling": {**GOOD["tiling"], "baseK": 64.5}}
    lines = ["{not json", json.dumps(unknown_key), json.dumps(unknown_soc),
             json.dumps(fp32_on_910a), json.dumps(non_int), json.dumps(GOOD)]  # fmt: skip
    code, out = run_cli(["validate"], lines, tmp_path)
    assert code == 1
    assert len(out) == 6
    assert out[0]["error"]["rule"] == "malformed_json"
    assert out[1]["error"]["field"] == "problem.colour"
    assert out[2]["error"]["rule"] == "unknown_soc"
    assert out[3]["error"]["field"] == "problem.dtype"
    assert "Ascend910A" in out[3]["error"]["message"]
    assert out[4]["error"]["field"] == "tiling.baseK"
    assert out[5] == {"valid": True, "violations": [], "warnings": []}


def test_importing_the_cli_loads_no_server_client_search_or_model() -> None:
    # `tiler tune` / `tiler evaluate` run once per shape from build systems: the HTTP client,
    # the web and database stacks and Optuna are imported by the commands that use them only.
    deferred = ["httpx", "fastapi", "starlette", "uvicorn", "sqlalchemy", "alembic", "optuna",
                "scipy"]  # fmt: skip
    # The model and the search load in the commands that run them (`tiler evaluate` needs no
    # search; `tiler --help` and `tiler version` need neither).
    deferred += ["numpy", "simcore.evaluate", "simcore.hardware.presets", "tiler.tune"]
    code = f"import sys, app.cli; print([m for m in {deferred!r} if m in sys.modules])"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.strip() == "[]"


def test_jobs_submit_to_an_unreachable_server_says_so() -> None:
    # A port nothing listens on: bound, then closed.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.run(
        [sys.executable, "-m", "app.cli", "jobs", "submit", "-", "--server",
         f"http://127.0.0.1:{port}"],
        input=json.dumps(GOOD["problem"]) + "\n", capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"cannot reach http://127.0.0.1:{port}" in proc.stderr


def test_presets_lists_every_soc_and_shows_one_with_its_sources() -> None:
    def run(*args: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "app.cli", "presets", *args],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout  # fmt: skip

    rows = [line.split("\t") for line in run().splitlines()]
    assert [row[0] for row in rows] == list(list_socs())
    assert all(row[3] == load_preset(row[0]).digest[:16] for row in rows)
    shown = json.loads(run("Ascend910B2"))
    assert shown["digest"] == load_preset("Ascend910B2").digest
    assert shown["sources"] == load_preset("Ascend910B2").sources
