"""``tiler ub-analyze``: seed 000's and 001's examples through the command line, as a process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_ub_analyze(lines: list[Any], tmp_path: Path) -> tuple[int, list[dict[str, Any]]]:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "app.cli", "ub-analyze", "--jsonl", str(src)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.stderr == ""
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()]


def blocks_of(out: dict[str, Any], operand: str) -> list[dict[str, Any]]:
    return [b for b in out["blocks"] if b["operand"] == operand]


def test_seed_000_block_stride_examples(tmp_path: Path) -> None:
    # Tables 2 and 4: dst (then src) at 0x1FE00 with block stride 16 -> all 8 blocks in one bank
    # group, 8 cycles per repeat; block stride 8 -> blocks 0/2/4/6 and 1/3/5/7 share groups, 4.
    lines = [
        {"op": "adds", "dst": "0x1FE00", "src0": "0x0", "dst_blk_stride": 16},
        {"op": "adds", "dst": "0x1FE00", "src0": "0x0", "dst_blk_stride": 8},
        {"op": "adds", "dst": 0, "src0": "0x1FE00", "src0_blk_stride": 16, "repeat": 3},
        {"soc": "Ascend310P3", "op": "adds", "dst": 0, "src0": "0x1FE00", "src0_blk_stride": 8},
    ]
    code, out = run_ub_analyze(lines, tmp_path)
    assert code == 0
    assert len(out) == 4
    ww16, ww8, rr16, rr8 = out

    dst = blocks_of(ww16, "dst")
    assert [b["index"] for b in dst] == list(range(8))
    assert [b["addr"] for b in dst[:3]] == [0x1FE00, 0x20000, 0x20200]
    assert {b["bank_group"] for b in dst} == {0}
    # 0x1FE00 lies in the second 64 KiB (bank 16), 0x20000 in the third (bank 32).
    assert [b["bank"] for b in dst[:2]] == [16, 32]
    (conflict,) = ww16["conflicts"]
    assert conflict["kind"] == "write_write"
    assert conflict["operands"] == ["dst"]
    assert len(conflict["blocks"]) == 8
    assert ww16["cycles_per_repeat"] == 8
    assert ww16["cycles"] == 8

    assert [b["addr"] for b in blocks_of(ww8, "dst")[:3]] == [0x1FE00, 0x1FF00, 0x20000]
    assert ww8["cycles_per_repeat"] == 4
    assert {c["kind"] for c in ww8["conflicts"]} == {"write_write"}
    pairs = sorted(sorted(b["index"] for b in c["blocks"]) for c in ww8["conflicts"])
    assert pairs == [[0, 2, 4, 6], [1, 3, 5, 7]]

    assert rr16["cycles_per_repeat"] == 8
    assert rr16["cycles"] == 3 * 8  # every repeat conflicts alike; 910B2 has no issue overhead
    assert [c["kind"] for c in rr16["conflicts"]] == ["read_read"]
    assert rr8["cycles_per_repeat"] == 4
    assert rr8["cycles"] == 4 + 4  # one repeat plus 310P3's 4 cycles of issue overhead


def test_seed_000_tables_1_and_3(tmp_path: Path) -> None:
    lines = [
        # Table 3, example 1: src0 0x10020 and src1 0x20020, different banks of bank group 1.
        {"op": "add", "dst": "0x0", "src0": "0x10020", "src1": "0x20020"},
        # Table 3, example 2: 0x10020 and 0x10000 are in different groups: no conflict.
        {"op": "add", "dst": "0x20200", "src0": "0x10020", "src1": "0x10000"},
        # Table 1, example 2: reading 0x10020 and writing 0x10E20, one bank.
        {"op": "adds", "dst": "0x10E20", "src0": "0x10020"},
    ]
    code, (dual, clean, rw) = run_ub_analyze(lines, tmp_path)
    assert code == 0
    assert blocks_of(dual, "src0")[0]["bank"] == 17
    assert blocks_of(dual, "src1")[0]["bank"] == 33
    cross = [c for c in dual["conflicts"] if c["operands"] == ["src0", "src1"]]
    assert cross
    assert {c["kind"] for c in cross} == {"read_read"}
    assert dual["cycles_per_repeat"] == 2
    assert clean["conflicts"] == []
    assert clean["cycles_per_repeat"] == 1
    assert {c["kind"] for c in rw["conflicts"]} == {"read_write"}
    assert rw["cycles_per_repeat"] == 2


def test_bad_lines_name_the_field_and_the_rest_goes_on(tmp_path: Path) -> None:
    good = {"op": "adds", "dst": "0x1FE00", "src0": 0, "dst_blk_stride": 16}
    lines = [
        "{not json",
        {**good, "repeat": 256},
        {**good, "mask": [0, 0]},
        {**good, "dtype": "fp32", "mask": 65},
        {**good, "dst": "0x1FE10"},
        {**good, "soc": "Ascend999"},
        {**good, "colour": "red"},
        {"op": "add", "dst": 0, "src0": 256},
        {**good, "dst": "0x2FF00"},
        good,
    ]
    code, out = run_ub_analyze(lines, tmp_path)
    assert code == 1
    assert len(out) == len(lines)
    errors = [(o.get("line"), o["error"]["field"], o["error"]["rule"]) for o in out[:-1]]
    assert errors == [
        (1, None, "malformed_json"),
        (2, "repeat", "repeat_times"),
        (3, "mask", "mask_bits_all_zero"),
        (4, "mask", "mask_continuous_range"),
        (5, "dst", "ub_alignment"),
        (6, "soc", "unknown_soc"),
        (7, "colour", "unknown_field"),
        (8, "src1", "required"),
        (9, "dst", "ub_out_of_range"),
    ]
    assert out[1]["error"]["limit"] == [1, 255]
    assert out[3]["error"]["limit"] == [1, 64]
    assert "Ascend910B2" in out[5]["error"]["limit"]
    assert out[-1]["cycles_per_repeat"] == 8
