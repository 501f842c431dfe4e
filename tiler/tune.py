"""Tune one Matmul problem: screening, the Optuna study, baselines and the explanation.

This module is the contract the CLI (``tiler tune``) and the HTTP service call:

* :class:`TuneRequest` -- ``problem`` (keys as ``tiler evaluate``), ``fixed`` (pinned struct
  fields), ``baseline`` (a TCubeTiling to compare with), ``budget`` (Optuna trials after
  screening; 0 = screening and baselines only), ``sampler`` and ``seed``;
* :func:`parse_tune_request` -- validation with errors naming the field;
* :func:`canonical_request` -- the normalized request (a cache key with the preset digest and
  the model version);
* :func:`tune` -- the answer: ``tiling``, ``estimate``, ``baselines``, ``certificate``,
  ``explanation``, ``search``.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simcore.errors import InputError
from simcore.estimate.estimator import estimate_arrays
from simcore.evaluate import estimate_dict
from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import ARCH_3510, Problem, check_supported, parse_problem
from simcore.tiling.tcube import TCubeTiling, parse_tiling_fields
from tiler.baselines import cann950_fields, matmul_v3_fields, recommended_fields, user_tiling
from tiler.explain import explain_tiling, runner_up
from tiler.limits import DEFAULT_BUDGET, MAX_BUDGET
from tiler.screen import ScreenResult, screen
from tiler.space import SEARCH_FIELDS, Space, build_space, parse_fixed
from tiler.study import Evaluation, Predictor, SharedStudy, StudyResult, key_of, run_study
from tiler.top_kernels import first_load_elements

#: With the default budget the study stops once this many instructions were simulated, counted
#: over every core program the simulator plays
#: (:func:`simcore.evaluate.simulated_instruction_count`; about half a second of simulation at
#: 1.1-2.2 M of them per CPU second), so a tune of a large kernel stays near a second; an
#: explicit budget always runs in full. (Until 2026-11-29 one core's count: a dealt split's 20
#: programs then took 8 s on 910B4 bf16 8192^3.)
DEFAULT_STUDY_INSTRUCTIONS = 800_000
#: Screened points enqueued first in the study (the rest of the budget is the sampler's): the
#: best distinct kernels of the screening.
SEEDED_TRIALS = 8
#: Distinct screened kernels the simulator may re-rank before the study, best estimate first
#: (within the same instruction cap): the estimator's p95 error is a few %, larger than the
#: margins between near-ties; on 910B2 fp16 1000 x 768 x 768 the kernel that simulates fastest
#: was 10th by estimate, on 1 x 768 x 768 (transposed B) beyond the 24th (CANN's own tiling,
#: 11.19 us against 11.20).
RERANKED_KERNELS = 256
#: Only kernels estimated within this of the optimum are re-ranked: about the estimator's p95
#: disagreement with the simulator (README "Estimator agreement"); a kernel further off
#: would need an error beyond that to win.
RERANK_RTOL = 0.05
#: When a resource floor sets the optimum's estimate, thousands of points share that time
#: (910B2 fp16 64 x 1024 x 4096: in up to 409 groups), and the screening skips every group that
#: can at most tie with it, keeping one point per (time, path). The tuner scores the points of
#: the groups whose bound allows a tie (ScreenResult.tie_groups), least bound first, up to
#: this many (about 0.04 s of estimator work; 200k found no better kernel there at 15x the
#: cost) ...
TIE_POINTS = 20_000
#: ... and simulates this many of the points that tie, least first-step load first (see
#: :func:`_tied_kernels`).
TIE_KERNELS = 16
#: Simulated instructions those kernels may take (the first always runs).
TIE_INSTRUCTIONS = DEFAULT_STUDY_INSTRUCTIONS // 4
#: Groups of ScreenResult.tie_groups looked at for those points, at most.
TIE_GROUPS_SCANNED = 512
#: The baseline name of aclnn MatMulV3's dealt kernel (:func:`tiler.baselines.matmul_v3_fields`).
MATMUL_V3_BASELINE = "aclnn_matmul_v3"


class TuneRequest(BaseModel):
    """One tuning request (the ``tiler tune --jsonl`` line and the HTTP body)."""

    model_config = ConfigDict(extra="forbid")

    problem: dict[str, Any]
    fixed: dict[str, int] = Field(default_factory=dict)
    baseline: dict[str, Any] | None = None
    #: Optuna trials after screening. Left out: DEFAULT_BUDGET trials, stopped early once the
    #: simulations of a large kernel reach DEFAULT_STUDY_INSTRUCTIONS (deterministic).
    budget: int = Field(default=DEFAULT_BUDGET, ge=0, le=MAX_BUDGET)
    sampler: Literal["tpe", "cmaes", "random", "gp"] = "tpe"
    seed: int = Field(default=0, ge=0, le=2**32 - 1)


def parse_tune_request(data: Any) -> TuneRequest:
    """Validates a tune request, including its problem, pins and baseline.

    Raises:
        InputError: Naming the field (``problem.m``, ``fixed.baseM``, ``baseline.stepKa``,
            ``budget``, ...), the rule and the limit.
    """
    if not isinstance(data, dict):
        raise InputError("request", "type", "request must be a JSON object", type(data).__name__)
    fixed = data.get("fixed")
    if isinstance(fixed, dict):
        parse_fixed(fixed)  # names the pinned field before pydantic's generic message
    try:
        req = TuneRequest.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "request"
        rule = {"extra_forbidden": "unknown_field", "missing": "required"}.get(
            err["type"], err["type"]
        )
        ctx = err.get("ctx") or {}
        limit = next((f"{k} {ctx[k]}" for k in ("ge", "le", "expected") if k in ctx), None)
        value = err.get("input") if err["type"] != "missing" else None
        if isinstance(value, dict | list):
            value = None
        raise InputError(field, rule, f"{field}: {err['msg']}", value, limit) from exc
    problem = parse_problem(req.problem)
    if req.baseline is not None:
        try:
            parse_tiling_fields(req.baseline)
        except InputError as exc:
            raise InputError(exc.field.replace("tiling", "baseline", 1), exc.rule,
                             exc.message.replace("tiling", "baseline", 1), exc.value,
                             exc.limit) from exc  # fmt: skip
    del problem
    return req


def _context(
    req: TuneRequest, preset: HardwarePreset | None = None
) -> tuple[Problem, HardwarePreset]:
    problem = parse_problem(req.problem)
    preset = preset or load_preset(problem.soc)
    check_supported(problem, preset)
    # The search and the model see a DN operand as the ND layout of its transpose.
    return problem.model_view(), preset


def canonical_request(req: TuneRequest) -> dict[str, Any]:
    """The request normalized: every problem default filled in, pins sorted, baseline complete.

    Equivalent requests give equal dicts (JSON-ready); the service hashes this with the preset
    digest and the model version into its cache key.
    """
    problem = parse_problem(req.problem)
    preset = load_preset(problem.soc)
    baseline = None
    if req.baseline is not None:
        baseline = complete_tiling(req.baseline, problem, preset).to_dict()
    return {
        "problem": problem.canonical(),
        "fixed": dict(sorted(parse_fixed(req.fixed).items())),
        "baseline": baseline,
        "budget": req.budget,
        # The default budget stops early on large kernels; an explicit one does not.
        "study_instruction_cap": _instruction_cap(req),
        "sampler": req.sampler,
        "seed": req.seed,
    }


def _instruction_cap(req: TuneRequest) -> int | None:
    return None if "budget" in req.model_fields_set else DEFAULT_STUDY_INSTRUCTIONS


def _search_fields(t: TCubeTiling) -> dict[str, int]:
    return {f: int(getattr(t, f)) for f in SEARCH_FIELDS}


def _distinct(top: list[Any], n: int) -> list[Any]:
    """The first ``n`` screened points that are distinct kernels, best first.

    Points with the same estimate, pipeline path and first load (the identity of
    :class:`tiler.top_kernels.TopKernels`) are almost always one kernel (an iterate order or an
    L0C buffer that changes nothing), so simulating more than one of them would teach nothing.
    Points with the same estimate but different paths are different kernels that one resource
    floor (HBM, a saturated pipe) prices alike; the simulator tells them apart (on 910B2 fp16
    128 x 14336 x 4096 such ties simulate 98.4 and 104.2 us); so are points with different steps.
    """

    def same(a: Any, b: Any) -> bool:
        dt = abs(float(a.time_us) - float(b.time_us))
        dp = abs(float(a.path_cycles) - float(b.path_cycles))
        return (
            dt <= 1e-9 * float(b.time_us)
            and dp <= 1e-9 * max(float(b.path_cycles), 1.0)
            and a.load_elements == b.load_elements
        )

    chosen: list[Any] = []
    for c in top:
        if not any(same(c, d) for d in chosen):
            chosen.append(c)
            if len(chosen) == n:
                break
    return chosen


def _tied_kernels(
    space: Space, screened: ScreenResult, skip: list[dict[str, int]]
) -> list[dict[str, int]]:
    """Points that share the optimum's estimate, from the groups whose bound allows a tie.

    Only when the optimum is floor-bound (its pipeline path is below its estimate, so the
    estimate is a resource floor that many kernels reach alike); the order among them is the
    first-step load (:func:`tiler.top_kernels.first_load_elements`), then the fields. At most
    :data:`TIE_KERNELS`, none of ``skip``.
    """
    first = screened.top[0]
    one = {f: np.asarray([v]) for f, v in first.fields.items()}
    est = estimate_arrays(space.problem, space.preset, one)
    if not float(est["path_cycles"][0]) < float(est["core_cycles"][0]):
        return []
    parts: list[dict[str, Any]] = []
    count = 0
    for g in screened.tie_groups[:TIE_GROUPS_SCANNED]:
        if count >= TIE_POINTS:
            break
        # A group larger than what is left is skipped before it is built (310P3 fp16
        # 1 x 28672 x 8192: millions of points in one group, 3 s to build and score).
        if space.point_count(g) > TIE_POINTS - count:
            continue
        pts = space.inner_points(g)
        parts.append(pts)
        count += int(pts["baseM"].shape[0])
    if not parts:
        return []
    pts = {f: np.concatenate([p[f] for p in parts]) for f in SEARCH_FIELDS}
    times = np.asarray(estimate_arrays(space.problem, space.preset, pts)["time_us"])
    tied = np.flatnonzero(times <= first.time_us * (1.0 + 1e-12))
    keys = [pts[f][tied] for f in reversed(SEARCH_FIELDS)] + [first_load_elements(pts)[tied]]
    seen = {tuple(sorted(d.items())) for d in skip}
    out: list[dict[str, int]] = []
    for i in tied[np.lexsort(keys)]:
        fields = {f: int(pts[f][i]) for f in SEARCH_FIELDS}
        if tuple(sorted(fields.items())) not in seen:
            out.append(fields)
            if len(out) == TIE_KERNELS:
                break
    return out


def tune(
    req: TuneRequest,
    *,
    storage: str | None = None,
    study_name: str | None = None,
    shared: SharedStudy | None = None,
    preset: HardwarePreset | None = None,
) -> dict[str, Any]:
    """Finds the fastest legal TCubeTiling of the request's problem under the model.

    Steps: build the legal space with the pins; screen it with the estimator (exact optimum
    and runner-up with a certificate, or the proven gap when the point budget ran out); run
    the Optuna study on the simulator seeded with the screened best; evaluate the baselines;
    answer with the fastest simulated legal tiling among all of them (so never slower than a
    legal baseline of the searched space). The searched space holds one tile per core and,
    where :func:`tiler.space.dealt_in_space` allows, dealt splits (the certificate's ``scope``);
    aclnn MatMulV3's dealt kernel (baseline ``aclnn_matmul_v3``, where it applies) is priced
    and listed but is no candidate: when its form is outside the searched space and it is
    faster, its speedup is below 1 and a caveat (``dealt_split_faster``) says so.

    Args:
        req: The request.
        storage: Optuna storage: None (in memory), a journal file path or an RDB URL.
        study_name: Share the study of this name in ``storage`` with every other process that
            tunes the same request with the same storage and name: the seeds run once, the
            trials of all of them total the budget, and each answers from every COMPLETE trial
            of the study (so they answer alike). Short for ``shared=SharedStudy(study_name)``.
        shared: The same with every option of :class:`tiler.study.SharedStudy`.
        preset: The chip to tune for instead of the problem's packaged preset (a calibration
            profile's preset: the same SoC with fitted model constants).

    Returns:
        ``tiling`` (every struct field), ``estimate`` (as ``tiler evaluate`` prints it),
        ``baselines`` (``name``, ``tiling``, ``valid``, ``estimate``, ``speedup``),
        ``certificate``, ``explanation`` and ``search``.

    Raises:
        InputError: The problem, a pin, the baseline, the sampler or the storage is invalid,
            or no legal tiling meets the pins.
    """
    t0 = time.perf_counter()
    if shared is None and study_name is not None:
        shared = SharedStudy(study_name)
    if shared is not None and storage is None:
        raise InputError("storage", "required", "a shared study needs a storage (an RDB URL "
                         "or a journal file)", None, None)  # fmt: skip
    problem, preset = _context(req, preset)
    space = build_space(problem, preset, req.fixed)
    screened = screen(space, top_k=RERANKED_KERNELS)
    predictor = Predictor(space)

    # Baselines: seed 002's recommendation (only when it meets the pins) and the caller's.
    baseline_rows: list[dict[str, Any]] = []
    baseline_evals: list[Evaluation] = []
    rec = recommended_fields(problem, preset)
    rec_tiling = complete_tiling(rec, problem, preset)
    rec_eval = predictor.baseline(rec)
    baseline_rows.append({"name": "seed002", "tiling": rec_tiling, "valid": rec_eval.legal})
    baseline_evals.append(rec_eval)
    if preset.npu_arch == ARCH_3510:
        # On 950 the answer is also compared with CANN's own pick there (256 x 256 base).
        cann = cann950_fields(problem, preset)
        cann_eval = predictor.baseline(cann)
        cann_tiling = complete_tiling(cann, problem, preset)
        baseline_rows.append({"name": "cann950", "tiling": cann_tiling, "valid": cann_eval.legal})
        baseline_evals.append(cann_eval)
    if req.baseline is not None:
        user_t, report = user_tiling(req.baseline, problem, preset)
        row: dict[str, Any] = {"name": "user", "tiling": user_t, "valid": report["valid"]}
        if not report["valid"]:
            row["violations"] = report["violations"]
        baseline_rows.append(row)
        baseline_evals.append(
            predictor.baseline(_search_fields(user_t))
            if report["valid"]
            else Evaluation(_search_fields(user_t), float("inf"), False, False)
        )

    # Candidates: the screened best, the study's trials, and legal baselines that meet the pins.
    cutoff = screened.top[0].time_us * (1.0 + RERANK_RTOL)
    near = [c.fields for c in _distinct(screened.top, RERANKED_KERNELS) if c.time_us <= cutoff]
    seeds = near[:SEEDED_TRIALS]
    candidates: list[Evaluation] = [predictor(near[0])]
    # Whatever the budget, the simulator decides among the screened near-ties: the estimator's
    # error (a few % at p95, README "Estimator agreement") is larger than the margins between
    # them. Bounded like the default study, by simulated instructions (the first always runs).
    for fields in near[1:]:
        if predictor.instructions >= DEFAULT_STUDY_INSTRUCTIONS:
            break
        candidates.append(predictor(fields))
    # Ties the screening skipped (a floor-bound optimum): bounded by TIE_KERNELS and by
    # TIE_INSTRUCTIONS simulated instructions.
    # Only while no simulated kernel reaches the optimum's estimate: where one does (310P3 fp16
    # 1 x 28672 x 8192, every near-tie simulates at the HBM floor), the ties cost simulations
    # (about 1 s there) for nothing the floor lets them gain.
    tied: list[dict[str, int]] = []
    if min(c.time_us for c in candidates) > screened.top[0].time_us * (1.0 + 1e-9):
        tied = _tied_kernels(space, screened, near)
    tie_start = predictor.instructions
    for fields in tied:
        if predictor.instructions - tie_start >= TIE_INSTRUCTIONS:
            break
        candidates.append(predictor(fields))
    study = run_study(
        space, predictor, seeds, req.budget, req.sampler, req.seed, storage,
        study_key=key_of(canonical_request(req)),
        max_instructions=_instruction_cap(req), shared=shared,
    )  # fmt: skip
    candidates.extend(e for e in study.evaluations.values() if e.legal)
    for ev in baseline_evals:
        if ev.legal and all(ev.fields[k] == v for k, v in space.fixed.items()):
            candidates.append(ev)
    # aclnn MatMulV3's dealt kernel where the sources say aclnn runs it: priced and listed but
    # never a candidate (the answer stays the certified optimum of the searched space, which
    # holds its form where dealt splits are searched; where it does not, the response says
    # when this is faster). Priced after the study: its simulation must not spend the study's
    # instruction cap.
    v3 = matmul_v3_fields(problem, preset)
    searched: set[str] = set()
    if v3 is not None:
        v3_eval = predictor.baseline(v3)
        v3_row = {"name": MATMUL_V3_BASELINE, "tiling": complete_tiling(v3, problem, preset),
                  "valid": v3_eval.legal}  # fmt: skip
        at = len(baseline_rows) - (req.baseline is not None)  # before the caller's
        baseline_rows.insert(at, v3_row)
        baseline_evals.insert(at, v3_eval)
        if space.holds_group(v3):
            searched.add(MATMUL_V3_BASELINE)
    best = min(candidates, key=lambda e: (e.time_us, tuple(sorted(e.fields.items()))))
    best_tiling = complete_tiling(best.fields, problem, preset)
    estimate = estimate_dict(
        problem, best_tiling, preset, sim=predictor.simulation(best.fields, best_tiling)
    )

    baselines_out = []
    for row, ev in zip(baseline_rows, baseline_evals, strict=True):
        out: dict[str, Any] = {
            "name": row["name"],
            "tiling": row["tiling"].to_dict(),
            "valid": row["valid"],
            "estimate": None,
            "speedup": None,
        }
        if "violations" in row:
            out["violations"] = row["violations"]
        if ev.legal:
            sim = predictor.simulation(ev.fields, row["tiling"])
            est = estimate_dict(problem, row["tiling"], preset, sim=sim)
            out["estimate"] = est
            out["speedup"] = est["time_us"] / estimate["time_us"]
        baselines_out.append(out)

    explanation = explain_tiling(problem, best_tiling, preset, estimate)
    explanation["caveats"].extend(_unsearched_faster(baselines_out, searched))
    if len(screened.top) >= 2:
        first = screened.top[0]
        # The runner-up is the best point with a larger time; points that tie with the optimum
        # (often the same kernel with an iterate order that does not matter) are counted.
        ties = [c for c in screened.top[1:] if c.time_us <= first.time_us * (1 + 1e-12)]
        later = [c for c in screened.top[1:] if c.time_us > first.time_us * (1 + 1e-12)]
        second = later[0] if later else screened.top[1]
        explanation["runner_up"] = {
            "source": "screening (estimator)",
            "ties_with_optimum": len(ties),
            **runner_up(first.fields, first.time_us, second.fields, second.time_us),
        }
    explanation["answer_source"] = _source(best, screened.top[0].fields, baseline_rows,
                                           baseline_evals, near + tied)  # fmt: skip
    certificate = screened.certificate()
    certificate["optimum_estimator_us"] = screened.top[0].time_us
    return {
        "tiling": best_tiling.to_dict(),
        "estimate": estimate,
        "baselines": baselines_out,
        "certificate": certificate,
        "explanation": explanation,
        "search": {
            "strategy": f"screen+optuna-{req.sampler}" if req.budget else "screen",
            "trials": study.trials,
            "seconds": time.perf_counter() - t0,
            "screen_seconds": screened.seconds,
            "study_seconds": study.seconds,
            "simulated_points": len(predictor.cache),
            **_shared_search(study, shared),
        },
    }


def _unsearched_faster(baselines: list[dict[str, Any]], searched: set[str]) -> list[dict[str, str]]:
    """A caveat for each listed baseline outside the searched space that beats the answer.

    ``searched``: the baselines whose group (core split and base block) the space holds.
    """
    out = []
    for b in baselines:
        speedup = b.get("speedup")
        if b["name"] != MATMUL_V3_BASELINE or b["name"] in searched:
            continue
        if speedup is None or speedup >= 1.0:
            continue
        gain = (1.0 / speedup - 1.0) * 100.0
        out.append({
            "id": "dealt_split_faster",
            "message": f"a dealt split (aclnn MatMulV3's, baseline {MATMUL_V3_BASELINE}) beats "
            f"the answer by {gain:.2f} % ({b['estimate']['time_us']:.1f} us); the searched "
            "space does not hold its core split and base block (dealt splits are searched only "
            "without UB staging and with usedCoreNum on every core), so the certificate's "
            "optimum does not cover it",
            "source": "docs/search.md",
        })  # fmt: skip
    return out


def _shared_search(study: StudyResult, shared: SharedStudy | None) -> dict[str, Any]:
    if shared is None:
        return {}
    return {"shared_study": {"name": shared.name, "worker": shared.worker,
                             "local_trials": study.local_trials}}  # fmt: skip


def contribute(req: TuneRequest, *, storage: str, shared: SharedStudy) -> int:
    """Runs trials of a shared study that another process set up, without answering.

    A helper's part: the study must already be ready (its creator enqueued the trials); this
    builds the space, runs WAITING trials until none is left and returns at once, leaving the
    answer to the processes that called :func:`tune`.

    Returns:
        How many trials ran here.

    Raises:
        InputError: The request or storage is invalid, or the study is not (yet) set up.
    """
    problem, preset = _context(req)
    space = build_space(problem, preset, req.fixed)
    helper = dataclasses.replace(shared, lead=False, answer=False)
    study = run_study(space, Predictor(space), [], req.budget, req.sampler, req.seed, storage,
                      shared=helper)  # fmt: skip
    return study.local_trials


def _source(
    best: Evaluation,
    screened_best: dict[str, int],
    rows: list[dict[str, Any]],
    evals: list[Evaluation],
    reranked: list[dict[str, int]],
) -> str:
    if best.fields == screened_best:
        return "screening optimum"
    for row, ev in zip(rows, evals, strict=True):
        if ev.fields == best.fields:
            return f"baseline {row['name']}"
    if best.fields in reranked:
        return "screening near-tie (simulator re-ranking)"
    return "optuna study"
