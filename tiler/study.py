"""The Optuna study: the simulator as the objective, seeded with the screened best points.

Parameters are the searched struct fields with fixed ranges (so CMA-ES and GP see one search
space): ``split`` (an index into the space's core splits), ``baseM``, ``baseN``, ``baseK``
(steps of 16, 16 and C0), ``stepM``, ``stepN``, ``stepKa``, ``stepKb`` (log scale),
``dbL1A``/``dbL1B`` (depth = step product x this), ``iterateOrder``, ``dbL0A/B/C``. Pinned
fields are not suggested. A point that breaks a rule scores a penalty (twice the worst legal
time seen, growing with how far the point is from legal), so every sampler, including those
without constraint support, can run and is steered back to the legal region.

The objective is the predicted time the answer reports: the discrete-event simulator
(:func:`simcore.simulator.simulate`) when the kernel is small enough to play
(``simcore.evaluate.MAX_SIMULATED_INSTRUCTIONS``), the estimator otherwise; results are cached
by point, so re-proposed points cost nothing.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simcore.errors import InputError
from simcore.estimator import estimate_one
from simcore.evaluate import MAX_SIMULATED_INSTRUCTIONS, instruction_count
from simcore.footprints import complete_tiling
from simcore.legality import check_tiling
from simcore.simulator import simulate
from tiler.space import Space

SAMPLERS: tuple[str, ...] = ("tpe", "cmaes", "random", "gp")


@dataclass
class Evaluation:
    """A point's predicted time (simulated when cheap) and whether it is legal.

    ``excess`` is, for an illegal point, how far it is from legal: the sum over its violations
    of value / limit - 1 (at least 1 per violation), so a sampler can be steered back.
    """

    fields: dict[str, int]
    time_us: float
    simulated: bool
    legal: bool
    excess: float = 0.0


@dataclass
class StudyResult:
    """What the study found: every evaluated point and the figures of the run."""

    evaluations: dict[tuple[int, ...], Evaluation] = field(default_factory=dict)
    trials: int = 0
    seconds: float = 0.0
    study_name: str = ""

    def best(self) -> Evaluation | None:
        """The fastest legal point, ties broken by the fields (deterministic)."""
        legal = [e for e in self.evaluations.values() if e.legal]
        if not legal:
            return None
        return min(legal, key=lambda e: (e.time_us, tuple(sorted(e.fields.items()))))


class Predictor:
    """Predicts legal tilings of one space with the simulator (cached)."""

    def __init__(self, space: Space) -> None:
        self.space = space
        self.cache: dict[tuple[int, ...], Evaluation] = {}
        #: Instructions simulated so far (a deterministic measure of the work done).
        self.instructions = 0

    def key(self, fields: dict[str, int]) -> tuple[int, ...]:
        """The cache key of a point (its values in field-name order)."""
        return tuple(int(fields[k]) for k in sorted(fields))

    def __call__(self, fields: dict[str, int]) -> Evaluation:
        """Returns the evaluation of a point (searched fields), simulating it once."""
        key = self.key(fields)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        problem, preset = self.space.problem, self.space.preset
        tiling = complete_tiling(dict(fields), problem, preset)
        report = check_tiling(problem, tiling, preset)
        if not report.valid:
            ev = Evaluation(dict(fields), float("inf"), False, False, _excess(report.violations))
        elif (count := instruction_count(problem, tiling)) <= MAX_SIMULATED_INSTRUCTIONS:
            self.instructions += count
            ev = Evaluation(dict(fields), simulate(problem, tiling, preset).time_us, True, True)
        else:
            ev = Evaluation(
                dict(fields), estimate_one(problem, tiling, preset)["time_us"], False, True
            )
        self.cache[key] = ev
        return ev


def _excess(violations: list[Any]) -> float:
    total = 0.0
    for v in violations:
        limit = v.limit if isinstance(v.limit, int) else None
        ratio = abs(v.value / limit - 1.0) if limit else 1.0
        total += max(ratio, 1.0)
    return total


def _sampler(name: str, seed: int) -> Any:
    import optuna

    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, with_margin=True)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "gp":
        import importlib.util

        for module in ("torch", "scipy"):
            # find_spec, not import: Optuna registers lazy stand-ins for its optional modules.
            if importlib.util.find_spec(module) is None:
                raise InputError(
                    "sampler",
                    "sampler_unavailable",
                    f"sampler 'gp' needs {module} (Optuna's GPSampler), which is not installed "
                    "here; use tpe, cmaes or random",
                    name,
                    ["tpe", "cmaes", "random"],
                )
        return optuna.samplers.GPSampler(seed=seed, deterministic_objective=True)
    raise InputError("sampler", "enum", f"unknown sampler {name!r}", name, list(SAMPLERS))


def make_storage(storage: str | None) -> Any:
    """Optuna storage: in memory (None), an RDB URL (``scheme://...``) or a journal file path.

    Raises:
        InputError: The storage cannot be opened.
    """
    import optuna

    if storage is None:
        return optuna.storages.InMemoryStorage()
    try:
        if "://" in storage:
            return optuna.storages.RDBStorage(storage)
        from optuna.storages.journal import JournalFileBackend

        return optuna.storages.JournalStorage(JournalFileBackend(storage))
    except Exception as exc:  # Optuna raises several types for a bad URL or path.
        raise InputError("storage", "storage_unavailable", f"cannot open storage: {exc}",
                         storage, None) from exc  # fmt: skip


def _ranges(space: Space) -> dict[str, tuple[int, int, int, bool]]:
    """(low, high, step, log) of every suggested parameter."""
    g = space.groups
    c0 = space.c0
    p = space.problem
    k_iter_max = int(-(-p.k // c0))
    m_blocks = int(g["m_iter"].max())
    n_blocks = int(g["n_iter"].max())
    return {
        "split": (0, max(len(space_splits(space)) - 1, 0), 1, False),
        "baseM": (16, int(g["baseM"].max()), 16, False),
        "baseN": (16, int(g["baseN"].max()), 16, False),
        "baseK": (c0, int(g["baseK"].max()), c0, False),
        "stepM": (1, max(m_blocks, 1), 1, True),
        "stepN": (1, max(n_blocks, 1), 1, True),
        "stepKa": (1, max(k_iter_max, 1), 1, True),
        "stepKb": (1, max(k_iter_max, 1), 1, True),
        "dbL1A": (1, 2, 1, False),
        "dbL1B": (1, 2, 1, False),
        "iterateOrder": (0, 1, 1, False),
        "dbL0A": (1, 2, 1, False),
        "dbL0B": (1, 2, 1, False),
        "dbL0C": (1, 2, 1, False),
    }


def space_splits(space: Space) -> list[tuple[int, int, int]]:
    """The distinct (singleCoreM, singleCoreN, usedCoreNum) of the space, sorted."""
    g = space.groups
    trip = np.stack([g["singleCoreM"], g["singleCoreN"], g["usedCoreNum"]], axis=1)
    return [tuple(int(x) for x in row) for row in np.unique(trip, axis=0)]  # type: ignore[misc]


def to_params(
    fields: dict[str, int], splits: list[tuple[int, int, int]], fixed: dict[str, int]
) -> dict[str, int] | None:
    """Optuna parameters of a point, or None when its core split is not in the space."""
    split = (fields["singleCoreM"], fields["singleCoreN"], fields["usedCoreNum"])
    if split not in splits:
        return None
    params = {
        "split": splits.index(split),
        "dbL1A": fields["depthA1"] // max(fields["stepM"] * fields["stepKa"], 1),
        "dbL1B": fields["depthB1"] // max(fields["stepN"] * fields["stepKb"], 1),
    }
    for name in ("baseM", "baseN", "baseK", "stepM", "stepN", "stepKa", "stepKb",
                 "iterateOrder", "dbL0A", "dbL0B", "dbL0C"):  # fmt: skip
        params[name] = fields[name]
    for name in ("singleCoreM", "singleCoreN", "usedCoreNum"):
        if name in fixed:
            params.pop("split", None)
    return {k: v for k, v in params.items() if k not in fixed}


def _fields_from(
    params: dict[str, int], splits: list[tuple[int, int, int]], fixed: dict[str, int]
) -> dict[str, int]:
    sm, sn, used = splits[params.get("split", 0)]
    f: dict[str, int] = {"singleCoreM": sm, "singleCoreN": sn, "usedCoreNum": used}
    f.update({k: v for k, v in params.items() if k not in ("split", "dbL1A", "dbL1B")})
    f.update(fixed)
    db_a = params.get("dbL1A", 1)
    db_b = params.get("dbL1B", 1)
    f.setdefault("depthA1", f["stepM"] * f["stepKa"] * db_a)
    f.setdefault("depthB1", f["stepN"] * f["stepKb"] * db_b)
    return f


def run_study(
    space: Space,
    predictor: Predictor,
    seeds: list[dict[str, int]],
    budget: int,
    sampler: str,
    seed: int,
    storage: str | None = None,
    study_key: str = "",
    max_instructions: int | None = None,
) -> StudyResult:
    """Runs ``budget`` trials: the ``seeds`` first (enqueued), then the sampler's proposals.

    Args:
        space: The legal space (its core splits and ranges define the parameters).
        predictor: The cached simulator objective.
        seeds: Points to enqueue first (at most ``budget`` are used).
        budget: Number of trials (0: nothing runs).
        sampler: One of :data:`SAMPLERS`.
        seed: The sampler's seed (same seed, same trials).
        storage: None (in memory), a journal file path or an RDB URL.
        study_key: Text hashed into the study name (with a unique suffix).
        max_instructions: Stop after the trial that takes the simulated instruction count of
            ``predictor`` past this (None: run every trial). Deterministic, unlike a clock.

    Raises:
        InputError: Unknown or unavailable sampler, or a storage that cannot be opened.
    """
    import optuna

    result = StudyResult()
    if budget <= 0:
        return result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # experimental-feature notices of Optuna's samplers
        sampler_obj = _sampler(sampler, seed)
    store = make_storage(storage)
    t0 = time.perf_counter()
    splits = space_splits(space)
    ranges = _ranges(space)
    fixed = space.fixed
    suggested = [
        n for n in ranges
        if n not in fixed
        and not (n == "split" and {"singleCoreM", "singleCoreN", "usedCoreNum"} & set(fixed))
        and not (n == "dbL1A" and "depthA1" in fixed)
        and not (n == "dbL1B" and "depthB1" in fixed)
    ]  # fmt: skip
    if {"singleCoreM", "singleCoreN", "usedCoreNum"} & set(fixed):
        names = ("singleCoreM", "singleCoreN", "usedCoreNum")
        keep = [
            s for s in splits if all(fixed.get(f, v) == v for f, v in zip(names, s, strict=True))
        ]
        splits = keep or splits
        if len(splits) > 1:
            suggested.insert(0, "split")
    digest = hashlib.sha256(study_key.encode()).hexdigest()[:12]
    name = f"tiler-{digest}-{sampler}-{seed}-{uuid.uuid4().hex[:8]}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=name, storage=store, sampler=sampler_obj,
                                direction="minimize")  # fmt: skip
    seen_worst = [0.0]

    def objective(trial: Any) -> float:
        params: dict[str, int] = {}
        for pname in suggested:
            lo, hi, step, log = ranges[pname]
            if pname == "split" and hi >= len(splits):
                hi = len(splits) - 1
            if log:
                params[pname] = trial.suggest_int(pname, lo, hi, log=True)
            else:
                params[pname] = trial.suggest_int(pname, lo, hi, step=step)
        ev = predictor(_fields_from(params, splits, fixed))
        result.evaluations[predictor.key(ev.fields)] = ev
        if not ev.legal:
            # Graded: worse than any legal point, and worse the further from legal it is.
            return (2.0 * seen_worst[0] if seen_worst[0] > 0 else 1e6) * (1.0 + ev.excess)
        seen_worst[0] = max(seen_worst[0], ev.time_us)
        return ev.time_us

    for point in seeds[:budget]:
        params = to_params(point, splits, fixed)
        if params is not None:
            study.enqueue_trial({k: v for k, v in params.items() if k in suggested})
    with warnings.catch_warnings():
        # Optuna warns about experimental samplers and independent fallbacks; not our users'.
        warnings.simplefilter("ignore")
        callbacks = []
        if max_instructions is not None:

            def stop_when_spent(study: Any, _trial: Any) -> None:
                if predictor.instructions > max_instructions:
                    study.stop()

            callbacks.append(stop_when_spent)
        study.optimize(objective, n_trials=budget, gc_after_trial=False, callbacks=callbacks)
    result.trials = len(study.trials)
    result.seconds = time.perf_counter() - t0
    result.study_name = name
    return result


def key_of(obj: Any) -> str:
    """A stable text key of a JSON-ready object."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


ObjectiveFn = Callable[[dict[str, int]], Evaluation]
