"""What each dtype gains for one shape: the tuned answer per dtype, next to CANN's pick on 950.

A team porting a model to Ascend 950 asks, per matmul shape: how fast is bf16, how much do fp8
and MX fp4 gain, and how does the tuned tiling compare with CANN's own 950 pick (base 256 x 256 x
128 bytes of K, one L0C buffer: :func:`tiler.baselines.cann950_fields`)? :func:`compare_dtypes`
tunes the request once per dtype (the problem's other keys unchanged; the output dtype kept when
the dtype can produce it, else that dtype's default) and answers one row per dtype.
"""

from __future__ import annotations

from typing import Any

from simcore.errors import InputError
from simcore.hardware.dtypes import OUTPUT_DTYPES, parse_dtype
from simcore.tiling.problem import parse_problem
from tiler.tune import TuneRequest, parse_tune_request, tune

#: At most this many dtypes per comparison (each is a full tune).
MAX_COMPARED_DTYPES = 8


def parse_dtype_list(names: list[str] | str, field: str = "compare_dtypes") -> list[str]:
    """Checks a list of dtype names (or a comma-separated string); aliases resolve.

    Raises:
        InputError: The list is empty or too long, or a name is no input dtype.
    """
    items = [x.strip() for x in names.split(",")] if isinstance(names, str) else list(names)
    if not items or len(items) > MAX_COMPARED_DTYPES:
        raise InputError(field, "list_length",
                         f"{field} needs 1 to {MAX_COMPARED_DTYPES} dtypes, got {len(items)}",
                         len(items), MAX_COMPARED_DTYPES)  # fmt: skip
    out: list[str] = []
    for i, name in enumerate(items):
        try:
            out.append(parse_dtype(name).value)
        except ValueError as exc:
            raise InputError(f"{field}[{i}]", "enum", f"{name!r} is not a dtype", name,
                             "an input dtype") from exc  # fmt: skip
    return out


def _request_for(req: TuneRequest, dtype: str) -> TuneRequest:
    problem = {k: v for k, v in req.problem.items() if k not in ("dtype", "dtype_b")}
    problem["dtype"] = dtype
    out = req.problem.get("out_dtype")
    if out is not None and out not in {d.value for d in OUTPUT_DTYPES[parse_dtype(dtype)]}:
        problem.pop("out_dtype")  # this dtype cannot produce it: take its default
    # A caller's baseline is a tiling of the first dtype; each dtype gets its own baselines.
    return parse_tune_request({**req.model_dump(exclude={"baseline"}), "problem": problem})


def compare_dtypes(req: TuneRequest, dtypes: list[str]) -> dict[str, Any]:
    """Tunes ``req`` once per dtype and compares the answers.

    Args:
        req: The tune request (its problem's dtype is replaced by each of ``dtypes``).
        dtypes: Dtype names (aliases allowed), first one the reference for the speedups.

    Returns:
        ``{"problem": ..., "reference_dtype": ..., "rows": [...]}``; each row has ``dtype``,
        ``out_dtype``, ``time_us``, ``tflops``, ``bottleneck``, ``tiling``,
        ``speedup_vs_reference`` (the reference dtype's time over this one's) and, on 950,
        ``cann950`` (CANN's pick: ``time_us``, ``tiling``) with ``gain_vs_cann`` (CANN's time /
        the tuned time).

    Raises:
        InputError: A dtype is unknown or the chip cannot run it (the error names the dtype).
    """
    names = parse_dtype_list(dtypes)
    rows: list[dict[str, Any]] = []
    for name in names:
        sub = _request_for(req, name)
        try:
            answer = tune(sub)
        except InputError as exc:
            raise InputError(f"compare_dtypes[{names.index(name)}]", exc.rule,
                             f"{name}: {exc.message}", exc.value, exc.limit) from exc  # fmt: skip
        est = answer["estimate"]
        row: dict[str, Any] = {
            "dtype": name,
            "out_dtype": parse_problem(sub.problem).c_dtype.value,
            "time_us": est["time_us"],
            "tflops": est["tflops"],
            "bottleneck": est["bottleneck"],
            "tiling": answer["tiling"],
        }
        for base in answer["baselines"]:
            if base["name"] == "cann950" and base["estimate"] is not None:
                row["cann950"] = {"time_us": base["estimate"]["time_us"], "tiling": base["tiling"]}
                row["gain_vs_cann"] = base["estimate"]["time_us"] / est["time_us"]
        rows.append(row)
    ref = rows[0]["time_us"]
    for row in rows:
        row["speedup_vs_reference"] = ref / row["time_us"]
    return {"problem": req.problem, "reference_dtype": names[0], "rows": rows}
