"""Bit-for-bit identity of the estimator's outputs across a code change.

A restructure or a speed-up of the estimator must not move a single bit of its outputs unless a
model term is changed on purpose (then MODEL_VERSION is bumped). This script saves every array
the estimator and its floors return for a fixed set of inputs, and compares a later run with them:

    uv run python -m scripts.model_identity save /tmp/identity.npz    # on the commit before
    uv run python -m scripts.model_identity check /tmp/identity.npz   # after the change

The inputs are random legal tilings of eleven problems on five chips (910B2, 910B4, 310P3, 910A,
310B1; fp16, bf16, int8, fp32; ND and NZ, transposes, bias, Norm and MDL), 3,000 distinct draws
per problem spread over four estimator blocks (65,536 candidates). They are stored in the file, so
``check`` scores the same inputs whatever the generator does later. The arrays compared are every
key of ``estimate_arrays``, ``makespan_floor_arrays``, ``operand_floor_arrays`` and, on chips with a
UB path, ``ub_operand_floor_arrays``. ``check`` exits 1 and names the first differing arrays.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from simcore.alloc import tune_allocator
from simcore.estimate.bounds import ub_operand_floor_arrays
from simcore.estimate.estimator import (
    ESTIMATOR_FIELDS,
    estimate_arrays,
    makespan_floor_arrays,
    operand_floor_arrays,
)
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem
from tests.support.random_tilings import random_tiling

#: (label, problem keys); each label names its arrays in the file.
PROBLEMS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("910B2_fp16_4096", {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096}),
    ("910B2_bf16_bias_tb", {"soc": "Ascend910B2", "m": 1000, "n": 8192, "k": 6144,
                            "dtype": "bf16", "trans_b": True, "bias": True}),
    ("910B2_int8_gemv", {"soc": "Ascend910B2", "m": 16, "n": 11008, "k": 4096, "dtype": "int8"}),
    ("910B2_fp32_mdl", {"soc": "Ascend910B2", "m": 4096, "n": 3584, "k": 18944, "dtype": "fp32",
                        "template": "mdl"}),
    ("910B4_fp16_nzb", {"soc": "Ascend910B4", "m": 2048, "n": 512, "k": 7000, "format_b": "NZ"}),
    ("310P3_fp16_4096", {"soc": "Ascend310P3", "m": 4096, "n": 4096, "k": 4096}),
    ("310P3_int8_gemv", {"soc": "Ascend310P3", "m": 16, "n": 11008, "k": 4096, "dtype": "int8"}),
    ("310P3_fp16_bias_ta", {"soc": "Ascend310P3", "m": 1024, "n": 1024, "k": 3000,
                            "trans_a": True, "bias": True}),
    ("910A_fp16_llm", {"soc": "Ascend910A", "m": 4096, "n": 28672, "k": 8192}),
    ("910A_int8_small", {"soc": "Ascend910A", "m": 512, "n": 1024, "k": 3000, "dtype": "int8"}),
    ("310B1_fp16_bias", {"soc": "Ascend310B1", "m": 2048, "n": 2048, "k": 2048, "bias": True}),
)  # fmt: skip
#: Distinct draws per problem and candidates per problem (four estimator blocks of 16,384).
DRAWS = 3000
CANDIDATES = 4 * 16384


def _inputs(problem: Problem, seed: int) -> dict[str, np.ndarray]:
    """Fixed random legal tilings of ``problem`` as estimator field arrays."""
    preset = load_preset(problem.soc)
    rng = np.random.default_rng(seed)
    pool = [random_tiling(problem, preset, rng, max_tries=5000) for _ in range(DRAWS)]
    idx = np.concatenate([np.arange(DRAWS), rng.integers(0, DRAWS, CANDIDATES - DRAWS)])
    return {
        f: np.array([getattr(t, f) for t in pool], dtype=np.int64)[idx] for f in ESTIMATOR_FIELDS
    }


def _outputs(problem: Problem, fields: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every array the estimator and its floors return for these inputs, by name."""
    preset = load_preset(problem.soc)
    calls: dict[str, Callable[..., dict[str, Any] | None]] = {
        "est": estimate_arrays,
        "floor": makespan_floor_arrays,
        "operand": operand_floor_arrays,
        "ub_operand": ub_operand_floor_arrays,
    }
    out: dict[str, np.ndarray] = {}
    for prefix, fn in calls.items():
        res = fn(problem, preset, fields)
        for key, value in (res or {}).items():
            out[f"{prefix}.{key}"] = np.asarray(np.broadcast_to(value, fields["baseM"].shape))
    return out


def save(path: str) -> int:
    """Draws the inputs, scores them and writes inputs and outputs to ``path``."""
    arrays: dict[str, np.ndarray] = {}
    for seed, (label, keys) in enumerate(PROBLEMS):
        problem = Problem(**keys)
        fields = _inputs(problem, seed)
        arrays.update({f"{label}/in.{name}": a for name, a in fields.items()})
        arrays.update({f"{label}/{name}": a for name, a in _outputs(problem, fields).items()})
        print(f"{label}: {CANDIDATES} candidates", file=sys.stderr)
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]
    print(f"saved {sum(1 for k in arrays if '/in.' not in k)} output arrays to {path}")
    return 0


def check(path: str) -> int:
    """Scores the inputs stored in ``path`` again and compares every output bit for bit."""
    saved = np.load(path)
    differing: list[str] = []
    new: set[str] = set()
    compared = 0
    for label, keys in PROBLEMS:
        problem = Problem(**keys)
        prefix = f"{label}/in."
        fields = {k[len(prefix) :]: saved[k] for k in saved.files if k.startswith(prefix)}
        now = _outputs(problem, fields)
        expected = {k[len(label) + 1 :] for k in saved.files if k.startswith(label + "/")}
        expected = {k for k in expected if not k.startswith("in.")}
        for name in sorted(expected | set(now)):
            compared += 1
            before = saved.get(f"{label}/{name}")
            after = now.get(name)
            if before is None:
                # A key the estimator did not return when the file was saved (e.g. the binding
                # term): nothing to compare it with, so it is listed, not counted.
                new.add(name)
                compared -= 1
            elif after is None:
                differing.append(f"{label}/{name}: only before")
            elif before.shape != after.shape or not np.array_equal(
                before.view(np.uint8), np.ascontiguousarray(after, before.dtype).view(np.uint8)
            ):
                rel = np.max(np.abs(after / np.where(before == 0, 1, before) - 1))
                moved = int(np.sum(before != after))
                differing.append(f"{label}/{name}: {moved} values differ, max rel {rel:.3g}")
    for line in differing[:40]:
        print(line)
    if new:
        print(f"not in the saved file (not compared): {', '.join(sorted(new))}")
    print(f"{compared} arrays compared, {len(differing)} differ")
    return 1 if differing else 0


def main() -> int:
    tune_allocator()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("save", "check"))
    parser.add_argument("path")
    args = parser.parse_args()
    return save(args.path) if args.action == "save" else check(args.path)


if __name__ == "__main__":
    raise SystemExit(main())
