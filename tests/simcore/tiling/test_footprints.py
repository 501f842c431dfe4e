"""Derived size fields against CANN's own tilings, and completing partial tilings.

The CSV loader here is shared with test_legality.py.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from simcore.hardware.dtypes import DType
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import (
    complete_tiling,
    nd_tail_pad_bytes,
    share_l0c_size,
    share_l1_size,
    share_ub_size,
    trans_length,
)
from simcore.tiling.problem import INT32_MAX, Problem, Template
from simcore.tiling.tcube import TCubeTiling

CSV_PATH = Path(__file__).resolve().parents[2] / "data" / "reference" / "cann_default_tilings.csv"
_META = ("soc", "mode", "dtype", "out_dtype", "M", "N", "K", "trans_a", "trans_b", "bias", "ret")


@dataclass(frozen=True)
class CannRow:
    """One row of cann_default_tilings.csv: the problem CANN tiled and the tiling it returned."""

    line: int
    meta: dict[str, str]
    fields: dict[str, int]

    @property
    def soc(self) -> str:
        return self.meta["soc"]

    @property
    def label(self) -> str:
        m = self.meta
        return (
            f"line {self.line}: {m['soc']} {m['mode']} {m['dtype']}->{m['out_dtype']} "
            f"{m['M']}x{m['N']}x{m['K']} t{m['trans_a']}{m['trans_b']} bias{m['bias']}"
        )

    def problem(self, template: str = "norm") -> Problem:
        m = self.meta
        return Problem(
            soc=m["soc"],
            m=int(m["M"]),
            n=int(m["N"]),
            k=int(m["K"]),
            dtype=DType(m["dtype"]),
            out_dtype=DType(m["out_dtype"]),
            trans_a=m["trans_a"] == "1",
            trans_b=m["trans_b"] == "1",
            bias=m["bias"] == "1",  # the CSV's bias dtype is fp32, Problem's default
            template=Template(template),
        )

    def tiling(self) -> TCubeTiling:
        """The struct exactly as CANN returned it (shape fields from the row's M, N, K)."""
        m = self.meta
        k = int(m["K"])
        return TCubeTiling(
            M=int(m["M"]), N=int(m["N"]), Ka=k, Kb=k, isBias=int(m["bias"]), **self.fields
        )


@cache
def cann_rows() -> tuple[CannRow, ...]:
    """Every successful row (ret == 0) of the CSV."""
    rows: list[CannRow] = []
    with CSV_PATH.open(newline="", encoding="utf-8") as fh:
        for line, raw in enumerate(csv.DictReader(fh), start=2):
            if raw["ret"] != "0":
                continue
            meta = {k: raw[k] for k in _META}
            fields = {k: int(v) for k, v in raw.items() if k not in _META}
            rows.append(CannRow(line, meta, fields))
    return tuple(rows)


def test_csv_has_the_documented_rows() -> None:
    rows = cann_rows()
    assert len(rows) == 2579
    assert {r.soc for r in rows} == {"Ascend910B2", "Ascend310P3"}


def test_share_l1_and_l0c_sizes_match_every_cann_row() -> None:
    wrong = []
    for row in cann_rows():
        problem, tiling, preset = row.problem(), row.tiling(), load_preset(row.soc)
        got = (share_l1_size(problem, tiling, preset), share_l0c_size(tiling))
        want = (tiling.shareL1Size, tiling.shareL0CSize)
        if got != want:
            wrong.append((row.label, got, want))
    assert wrong == []


def test_trans_length_and_share_ub_size_match_every_cann_row() -> None:
    wrong = []
    nonzero = 0
    for row in cann_rows():
        problem, tiling, preset = row.problem(), row.tiling(), load_preset(row.soc)
        got = (trans_length(problem, tiling, preset), share_ub_size(problem, tiling, preset))
        want = (tiling.transLength, tiling.shareUbSize)
        nonzero += want != (0, 0)
        if got != want:
            wrong.append((row.label, got, want))
    assert wrong == []
    # The 857 Ascend310P3 rows carry real UB sizes; a formula returning 0 could not pass.
    assert nonzero == 857


def _tiling(problem: Problem, soc: str, **fields: int) -> TCubeTiling:
    base = {
        "usedCoreNum": 1,
        "singleCoreM": problem.m,
        "singleCoreN": problem.n,
        "baseM": 16,
        "baseN": 256,
        "baseK": 64,
        "depthA1": 1,
        "depthB1": 4,
        "stepM": 1,
        "stepN": 1,
        "stepKa": 1,
        "stepKb": 4,
    }
    return complete_tiling({**base, **fields}, problem, load_preset(soc))


def test_bank_conflict_pad_only_for_rows_of_a_multiple_of_256_elements() -> None:
    # B not transposed is staged as baseK*stepKb rows of baseN*stepN contiguous elements.
    preset = load_preset("Ascend310P3")
    problem = Problem(soc="Ascend310P3", m=16, n=4096, k=256)
    padded = _tiling(problem, "Ascend310P3", baseN=256)
    assert trans_length(problem, padded, preset) == 256 * 256 * 2 + 256 * 16 * 2
    plain = _tiling(problem, "Ascend310P3", baseN=240)
    assert trans_length(problem, plain, preset) == 256 * 240 * 2


def test_trans_length_counts_the_l1_steps() -> None:
    preset = load_preset("Ascend310P3")
    problem = Problem(soc="Ascend310P3", m=16, n=4096, k=4096)
    one = _tiling(problem, "Ascend310P3", baseN=240, stepKb=4, depthB1=4)
    two = _tiling(problem, "Ascend310P3", baseN=240, stepKb=8, depthB1=8)
    assert trans_length(problem, two, preset) == 2 * trans_length(problem, one, preset)


def test_share_ub_size_adds_tail_pad_and_c_staging_on_310p() -> None:
    preset = load_preset("Ascend310P3")
    c_block = 16 * 256 * 2
    aligned = Problem(soc="Ascend310P3", m=16, n=4096, k=1024)
    assert share_ub_size(aligned, _tiling(aligned, "Ascend310P3"), preset) == c_block
    # K = 1000 fp16 is 2000 B, not whole 32-byte blocks: A's rows need a baseM x 32 B pad.
    odd_k = Problem(soc="Ascend310P3", m=16, n=4096, k=1000)
    t = _tiling(odd_k, "Ascend310P3")
    assert nd_tail_pad_bytes(odd_k, t) == 16 * 32
    assert share_ub_size(odd_k, t, preset) == 16 * 32 + c_block
    # A C row of singleCoreN = 1000 fp16 is not 32-byte aligned either: 32 B more.
    odd_n = Problem(soc="Ascend310P3", m=16, n=1000, k=1024)
    t = _tiling(odd_n, "Ascend310P3", singleCoreN=1000)
    assert share_ub_size(odd_n, t, preset) == 64 * 32 + c_block + 32


def test_ub_sizes_are_zero_on_910b() -> None:
    problem = Problem(m=16, n=1000, k=1000)
    t = _tiling(problem, "Ascend910B2")
    assert (t.transLength, t.shareUbSize) == (0, 0)


def test_complete_tiling_fills_shapes_and_derived_sizes() -> None:
    problem = Problem(m=4096, n=4096, k=4096, bias=True)
    t = _tiling(problem, "Ascend910B2")
    assert (t.M, t.N, t.Ka, t.Kb, t.singleCoreK, t.isBias) == (4096, 4096, 4096, 4096, 4096, 1)
    assert (t.dbL0A, t.dbL0B, t.dbL0C, t.iterateOrder) == (2, 2, 1, 0)
    # 1 A block (16 x 64) + 4 B blocks (256 x 64) of fp16 + 256 fp32 bias values for the BT.
    assert t.shareL1Size == 16 * 64 * 2 + 4 * 256 * 64 * 2 + 256 * 4
    assert t.shareL0CSize == 16 * 256 * 4


def test_complete_tiling_keeps_given_derived_sizes() -> None:
    problem = Problem(m=64, n=64, k=64)
    t = _tiling(problem, "Ascend910B2", shareL1Size=7)
    assert t.shareL1Size == 7


def test_complete_tiling_saturates_sizes_beyond_int32() -> None:
    problem = Problem(m=64, n=64, k=64)
    huge: dict[str, Any] = {"baseM": INT32_MAX, "baseK": INT32_MAX, "depthA1": INT32_MAX}
    t = _tiling(problem, "Ascend910B2", **huge)
    assert t.shareL1Size == INT32_MAX
    assert t.shareL0CSize == INT32_MAX


@pytest.mark.parametrize("soc", ["Ascend310P3", "Ascend910A", "Ascend310B1"])
def test_ub_chips_report_a_trans_length(soc: str) -> None:
    problem = Problem(soc=soc, m=256, n=256, k=256)
    t = _tiling(problem, soc)
    assert t.transLength > 0
