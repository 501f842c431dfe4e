"""``tiler tune``: the fastest legal TCubeTiling of one problem (flags) or of each JSONL line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.feedback import (
    DatabaseOption,
    SourceOption,
    measured_answer,
    request_candidates,
)
from app.cli.jsonl import error_object, run_jsonl
from tiler.limits import DEFAULT_BUDGET, MAX_TOP_K


def _parse_pins(pins: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for pin in pins:
        name, sep, value = pin.partition("=")
        if not sep:
            raise typer.BadParameter(f"{pin!r} is not FIELD=VALUE", param_hint="--fixed")
        try:
            out[name.strip()] = int(value)
        except ValueError as exc:
            raise typer.BadParameter(f"{pin!r}: {value!r} is not an integer",
                                     param_hint="--fixed") from exc  # fmt: skip
    return out


def tune_cmd(
    jsonl: Annotated[
        Path | None,
        typer.Option("--jsonl", help="File with one tune request per line ('-' for stdin)."),
    ] = None,
    soc: Annotated[str, typer.Option(help="SoC preset.")] = "Ascend910B2",
    m: Annotated[int | None, typer.Option("--m", help="M (rows of A and C).")] = None,
    n: Annotated[int | None, typer.Option("--n", help="N (columns of B and C).")] = None,
    k: Annotated[int | None, typer.Option("--k", help="K (the reduction).")] = None,
    dtype: Annotated[str, typer.Option(help="Input dtype.")] = "fp16",
    out_dtype: Annotated[str | None, typer.Option(help="Output dtype.")] = None,
    format_a: Annotated[str, typer.Option(help="ND, NZ or DN (arch 3510).")] = "ND",
    format_b: Annotated[str, typer.Option(help="ND, NZ or DN (arch 3510).")] = "ND",
    format_c: Annotated[str, typer.Option(help="ND or NZ.")] = "ND",
    c_position: Annotated[
        str, typer.Option(help="GM, or UB: C left in UB for a fused epilogue (arch 3510).")
    ] = "GM",
    trans_a: Annotated[bool, typer.Option(help="A is transposed.")] = False,
    trans_b: Annotated[bool, typer.Option(help="B is transposed.")] = False,
    bias: Annotated[bool, typer.Option(help="Add a bias.")] = False,
    bias_dtype: Annotated[str | None, typer.Option(help="Bias dtype.")] = None,
    template: Annotated[str, typer.Option(help="norm or mdl.")] = "norm",
    fixed: Annotated[
        list[str] | None, typer.Option("--fixed", help="Pin a field: FIELD=VALUE (repeatable).")
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(help="A TCubeTiling (JSON object) to compare with.")
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            help=f"Optuna trials after screening (default {DEFAULT_BUDGET}, stopped early on large "
            "kernels as a request without a budget is; an explicit one runs in full)."
        ),
    ] = None,
    sampler: Annotated[str, typer.Option(help="tpe, cmaes, random or gp.")] = "tpe",
    seed: Annotated[int, typer.Option(help="Sampler seed.")] = 0,
    storage: Annotated[
        str | None, typer.Option(help="Optuna storage: a journal file path or an RDB URL.")
    ] = None,
    svg: Annotated[
        Path | None, typer.Option(help="Write a picture of the answer (one problem only).")
    ] = None,
    compare_dtypes: Annotated[
        str | None,
        typer.Option(
            "--compare-dtypes",
            help="Tune once per dtype (comma-separated, e.g. bf16,fp8_e4m3,mxfp4) and compare; "
            "on 950 each row shows CANN's pick too.",
        ),
    ] = None,
    top_k: Annotated[
        int | None,
        typer.Option(
            "--top-k",
            min=1,
            max=MAX_TOP_K,
            help='Add the k best distinct kernels ("candidates", as GET '
            "/v1/tilings/{id}/candidates answers them).",
        ),
    ] = None,
    database: DatabaseOption = None,
    source: SourceOption = "measured",
) -> None:
    """Tune: the fastest legal TCubeTiling under the model, with baselines and a certificate."""
    # The search and the model load here, not when `tiler evaluate` or `--help` start.
    from simcore.errors import SimcoreError
    from simcore.hardware.presets import load_preset
    from simcore.tiling.problem import parse_problem
    from tiler.compare import compare_dtypes as compare_dtype_rows
    from tiler.compare import parse_dtype_list
    from tiler.tune import parse_tune_request, tune

    def handle(data: Any) -> dict[str, Any]:
        request = parse_tune_request(data)
        if compare_dtypes is not None:
            return compare_dtype_rows(request, parse_dtype_list(compare_dtypes))
        answer = tune(request, storage=storage)
        if top_k is not None:
            answer["candidates"] = request_candidates(request, answer, top_k)
        if database is not None:
            answer = measured_answer(database, request, answer, source)
        return answer

    if jsonl is not None:
        if svg is not None:
            raise typer.BadParameter(
                "--svg needs a single problem, not --jsonl", param_hint="--svg"
            )
        run_jsonl(jsonl, handle)
        return
    if m is None or n is None or k is None:
        raise typer.BadParameter("give --m, --n and --k (or --jsonl FILE)", param_hint="--m")
    problem: dict[str, Any] = {
        "soc": soc, "m": m, "n": n, "k": k, "dtype": dtype, "format_a": format_a,
        "format_b": format_b, "format_c": format_c, "trans_a": trans_a, "trans_b": trans_b,
        "bias": bias, "template": template, "c_position": c_position,
    }  # fmt: skip
    if out_dtype is not None:
        problem["out_dtype"] = out_dtype
    if bias_dtype is not None:
        problem["bias_dtype"] = bias_dtype
    request: dict[str, Any] = {
        "problem": problem,
        "fixed": _parse_pins(fixed or []),
        "sampler": sampler,
        "seed": seed,
    }
    if budget is not None:
        # Only when given: a request without a budget stops its study early on large kernels
        # (tiler.tune.DEFAULT_STUDY_INSTRUCTIONS), the same answer as the API's and a JSONL line's.
        request["budget"] = budget
    if baseline is not None:
        try:
            request["baseline"] = json.loads(baseline)
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"not JSON: {exc.msg}", param_hint="--baseline") from exc
    try:
        answer = handle(request)
    except (SimcoreError, ValueError) as exc:
        sys.stdout.write(json.dumps(error_object(exc), separators=(",", ":")) + "\n")
        raise typer.Exit(1) from exc
    sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
    if svg is not None and compare_dtypes is None:
        from app.views.svg import answer_svg

        parsed = parse_problem(problem)
        svg.write_text(answer_svg(answer, parsed, load_preset(parsed.soc)), encoding="utf-8")
