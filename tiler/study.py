"""The Optuna study: the simulator as the objective, seeded with the screened best points.

Parameters are the searched struct fields with fixed ranges (so CMA-ES and GP see one search
space): ``split`` (an index into the space's core splits), ``baseM``, ``baseN``, ``baseK``
(steps of 16, 16 and C0), ``stepM``, ``stepN``, ``stepKa``, ``stepKb`` (log scale),
``dbL1A``/``dbL1B`` (depth = step product x this), ``iterateOrder``, ``dbL0A/B/C``. Pinned
fields are not suggested. Most of that box is illegal (L0 / L1 capacity, blocks larger than the
data), so a proposal that breaks a rule is scored as the nearest legal point of the space
(:meth:`_Objective.project`: same core split, nearest base block, then the group's nearest
steps, buffering, order and flags); every sampler, including those without constraint support,
then learns from legal times only, and random sampling finds legal points. Only when no point
of the space exists does a proposal score a penalty (twice the worst legal time seen, growing
with how far the point is from legal). Legal proposals outside the space (unbalanced steps)
are scored as they are.

The objective is the predicted time the answer reports: the discrete-event simulator
(:func:`simcore.pipeline.simulator.simulate`) when the kernel is small enough to play
(``simcore.evaluate.MAX_SIMULATED_INSTRUCTIONS``), the estimator otherwise; results are cached
by point, so re-proposed points cost nothing.

Shared studies (:class:`SharedStudy`): several processes that call :func:`run_study` with the
same storage (an RDB URL or a journal file) and the same study name run one search together.
Whoever creates the study enqueues the whole budget as WAITING trials (the screened seeds
first, then empty ones the sampler fills), each with a ``tiler_slot`` user attribute, and marks
the study ready (user attribute ``tiler_budget``). Every process then pops WAITING trials -
Optuna's atomic WAITING -> RUNNING transition, the same one ``Study.ask`` uses - until none is
left, so the seeds run once and the trials of all processes total the budget exactly (a new
trial is never created). Each trial records its worker (``tiler_worker``) and the point it
evaluated (``tiler_fields``, ``tiler_legal``, ``tiler_simulated``), so a process answers from
every COMPLETE trial in the storage without simulating the others' points again.
"""

from __future__ import annotations

import contextlib
import functools
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
from simcore.estimate.estimator import estimate_one
from simcore.evaluate import MAX_SIMULATED_INSTRUCTIONS, simulated_instruction_count
from simcore.pipeline.simulator import SimResult, simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.tcube import TCubeTiling
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
    #: Trials this process ran (equals ``trials`` unless the study is shared).
    local_trials: int = 0
    #: Predicted time of each trial's point in trial order (inf: illegal); unshared runs only.
    history_us: list[float] = field(default_factory=list)

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
        #: Instructions simulated so far, every core program of each kernel
        #: (:func:`simcore.evaluate.simulated_instruction_count`): a deterministic measure of the
        #: work done.
        self.instructions = 0
        # The simulations kept for the answer's estimate (estimate_dict(sim=...)): the fastest
        # point's so far and the baselines'. Not every one: a big
        # kernel's (every core's instruction log) takes several MB.
        self._kept: dict[tuple[int, ...], tuple[TCubeTiling, SimResult]] = {}
        self._wanted: set[tuple[int, ...]] = set()
        self._fastest: tuple[float, tuple[int, ...]] | None = None

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
        elif (count := simulated_instruction_count(problem, tiling)) <= MAX_SIMULATED_INSTRUCTIONS:
            self.instructions += count
            sim = simulate(problem, tiling, preset)
            ev = Evaluation(dict(fields), sim.time_us, True, True)
            self._hold(key, tiling, sim)
        else:
            ev = Evaluation(
                dict(fields), estimate_one(problem, tiling, preset)["time_us"], False, True
            )
        self.cache[key] = ev
        return ev

    def baseline(self, fields: dict[str, int]) -> Evaluation:
        """Predicts a baseline, keeping its simulation for :meth:`simulation` (its estimate)."""
        self._wanted.add(self.key(fields))
        return self(fields)

    def simulation(self, fields: dict[str, int], tiling: TCubeTiling) -> SimResult | None:
        """The simulation of ``tiling`` if this predictor ran and kept it, else None.

        Kept: the fastest point's so far and the baselines' (:meth:`baseline`). ``tiling`` must
        be the very tiling simulated (a caller's may carry fields the search does not set).
        """
        hit = self._kept.get(self.key(fields))
        return hit[1] if hit is not None and hit[0] == tiling else None

    def _hold(self, key: tuple[int, ...], tiling: TCubeTiling, sim: SimResult) -> None:
        # Keeps a wanted point's simulation, and the fastest one's in place of the one before.
        if key in self._wanted:
            self._kept[key] = (tiling, sim)
        if self._fastest is not None and self._fastest[0] <= sim.time_us:
            return
        if self._fastest is not None and self._fastest[1] not in self._wanted:
            self._kept.pop(self._fastest[1], None)
        self._fastest = (sim.time_us, key)
        self._kept[key] = (tiling, sim)


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
        return _gp_sampler_class()(seed=seed, deterministic_objective=True)
    raise InputError("sampler", "enum", f"unknown sampler {name!r}", name, list(SAMPLERS))


@functools.cache
def _gp_sampler_class() -> Any:
    """Optuna's GPSampler, without the torch device mode it enters for every proposal.

    Optuna 5.0 proposes inside ``with torch.device("cpu")`` (optuna/optuna#6418, for users who
    set CUDA as torch's default device). torch implements that as a TorchFunctionMode that
    interposes every torch call (pytorch/pytorch#92701), and a proposal here is ~100k tiny
    calls of the acquisition's discrete line search: the mode took ~35 % of a proposal's time
    on a 310P3 shape. This process never moves torch's default device off the CPU, so the
    proposal is computed outside the mode: same device, same numbers, same trials.
    """
    import optuna
    import torch.overrides
    from torch.utils._device import DeviceContext

    class _GPSampler(optuna.samplers.GPSampler):
        def _sample_relative_impl(self, *args: Any, **kwargs: Any) -> Any:
            mode = getattr(torch.overrides, "_get_current_function_mode")()  # noqa: B009 (untyped)
            on_cpu = isinstance(mode, DeviceContext) and mode.device == torch.device("cpu")
            hide = torch.overrides._pop_mode_temporarily() if on_cpu else contextlib.nullcontext()
            with hide:
                return super()._sample_relative_impl(*args, **kwargs)

    return _GPSampler


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
            return _rdb_storage(storage)
        from optuna.storages.journal import JournalFileBackend

        return optuna.storages.JournalStorage(JournalFileBackend(storage))
    except Exception as exc:  # Optuna raises several types for a bad URL or path.
        raise InputError("storage", "storage_unavailable", f"cannot open storage: {exc}",
                         storage, None) from exc  # fmt: skip


@functools.cache
def _rdb_storage(url: str) -> Any:
    """One RDB storage (one connection pool) per URL and process; a worker tunes many shapes."""
    import optuna

    for attempt in range(3):
        try:
            return optuna.storages.RDBStorage(url)
        except Exception:
            # Processes starting together on an empty database race to create Optuna's
            # tables; the loser's CREATE fails and the tables exist when it tries again.
            if attempt == 2:
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


def _ranges(space: Space) -> dict[str, tuple[int, int, int, bool]]:
    """(low, high, step, log) of every suggested parameter."""
    g = space.groups
    c0 = space.c0
    p = space.problem
    k_iter_max = int(-(-p.k // c0))
    m_blocks = int(g["m_iter"].max())
    n_blocks = int(g["n_iter"].max())
    return {
        "split": (0, max(len(space.splits) - 1, 0), 1, False),
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


@dataclass(frozen=True)
class SharedStudy:
    """How this process takes part in a study shared through a storage with other processes.

    Attributes:
        name: The study's name; processes with the same storage and name cooperate. Name it
            from everything that defines the search (the service uses its cache key).
        worker: This process's id, recorded on every trial it runs (``tiler_worker``).
        lead: None: whoever creates the study enqueues its trials. True: the caller knows it is
            the only lead (it holds a lease) and also finishes a setup that a lead killed
            mid-way left incomplete. False: never set up; wait until the study is ready.
        wait_s: How long to wait for a setup to finish, and for the trials other processes
            are running to complete, before answering from the COMPLETE trials there are.
        poll_s: Interval of those waits.
        is_alive: Tells whether another worker (by its id) still lives; a RUNNING trial of a
            dead worker is marked FAIL instead of being waited for. None: wait ``wait_s``.
        answer: False for a helper that only runs trials: it neither waits for the others'
            trials nor reads the study's results.
    """

    name: str
    worker: str = field(default_factory=lambda: uuid.uuid4().hex)
    lead: bool | None = None
    wait_s: float = 600.0
    poll_s: float = 0.05
    is_alive: Callable[[str], bool] | None = None
    answer: bool = True


#: Study user attribute set once every slot is enqueued: the study's budget.
READY_ATTR = "tiler_budget"


def _suggested(space: Space) -> tuple[list[str], list[tuple[int, int, int]]]:
    """The suggested parameter names and the core splits of a space (pins respected)."""
    splits = space.splits
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
    return suggested, splits


class _Objective:
    """Suggests a point in a trial, predicts it, and scores it (penalty when illegal)."""

    def __init__(self, space: Space, predictor: Predictor) -> None:
        self.space = space
        self.predictor = predictor
        self.ranges = _ranges(space)
        self.suggested, self.splits = _suggested(space)
        self.seen_worst = 0.0
        #: Position of each core split in ``splits`` (a dict: project() runs every trial).
        self.split_index = {s: i for i, s in enumerate(self.splits)}
        index = self.split_index
        position = np.array([index.get(s, -1) for s in space.splits], dtype=np.int64)
        #: Index into ``splits`` of every group's core split (-1: not a split of the study).
        self.group_split = position[space.split_index]

    def evaluate(self, trial: Any) -> tuple[float, Evaluation]:
        """The trial's objective value and the evaluation of its point."""
        params: dict[str, int] = {}
        for pname in self.suggested:
            lo, hi, step, log = self.ranges[pname]
            if pname == "split" and hi >= len(self.splits):
                hi = len(self.splits) - 1
            if log:
                params[pname] = trial.suggest_int(pname, lo, hi, log=True)
            else:
                params[pname] = trial.suggest_int(pname, lo, hi, step=step)
        fields = _fields_from(params, self.splits, self.space.fixed)
        ev = self.predictor(fields)
        if not ev.legal:
            projected = self.project(fields, params)
            if projected is not None:
                # The trial keeps the sampler's parameters but scores the nearest legal point.
                ev = self.predictor(projected)
        if not ev.legal:
            # Graded: worse than any legal point, and worse the further from legal it is.
            worst = self.seen_worst
            return (2.0 * worst if worst > 0 else 1e6) * (1.0 + ev.excess), ev
        self.seen_worst = max(self.seen_worst, ev.time_us)
        return ev.time_us, ev

    def project(self, fields: dict[str, int], params: dict[str, int]) -> dict[str, int] | None:
        """The point of the space nearest to an illegal suggestion (None: the space is empty).

        Most of the box the parameters span is illegal (L0 / L1 capacity, blocks larger than
        the data), and a sampler that only sees penalties there learns slowly and random
        sampling may never find a legal point. So an illegal suggestion is scored as the legal
        point closest to it: first the group (same core split, base block nearest in log
        scale), then the group's point nearest in log-scaled steps, L1 double buffering,
        iterate order and L0 flags. Legal suggestions, also those the space does not contain
        (unbalanced steps), are scored as they are.
        """
        gr = self.space.groups
        if gr["baseM"].shape[0] == 0:
            return None
        split = (fields["singleCoreM"], fields["singleCoreN"], fields["usedCoreNum"])
        at = self.split_index.get(split)
        same = None if at is None else self.group_split == at
        dist = np.zeros(gr["baseM"].shape[0])
        for name in ("baseM", "baseN", "baseK"):
            dist += np.abs(np.log2(gr[name] / max(fields[name], 1)))
        if same is not None and same.any():
            dist = np.where(same, dist, np.inf)
        else:
            # A pinned split outside the groups cannot happen; any other: nearest split too.
            for name in ("singleCoreM", "singleCoreN"):
                dist += np.abs(np.log2(gr[name] / max(fields[name], 1)))
        g = int(np.argmin(dist))  # first of equals: deterministic
        pts = self.space.inner_points(g)
        if pts["baseM"].shape[0] == 0:
            return None
        d = np.zeros(pts["baseM"].shape[0])
        for name in ("stepM", "stepN", "stepKa", "stepKb"):
            d += np.abs(np.log2(pts[name] / max(fields[name], 1)))
        db_a = pts["depthA1"] // (pts["stepM"] * pts["stepKa"])
        db_b = pts["depthB1"] // (pts["stepN"] * pts["stepKb"])
        d += np.abs(db_a - params.get("dbL1A", 1)) + np.abs(db_b - params.get("dbL1B", 1))
        for name in ("iterateOrder", "dbL0A", "dbL0B", "dbL0C"):
            d += np.abs(pts[name] - fields[name])
        i = int(np.argmin(d))
        return {name: int(pts[name][i]) for name in pts}

    def seed_params(self, seeds: list[dict[str, int]]) -> list[dict[str, int]]:
        """The seeds as trial parameters (seeds outside the space's core splits dropped)."""
        out = []
        for point in seeds:
            params = to_params(point, self.splits, self.space.fixed)
            if params is not None:
                out.append({k: v for k, v in params.items() if k in self.suggested})
        return out


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
    shared: SharedStudy | None = None,
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
            Not applied to a shared study, whose total must not depend on timing.
        shared: Take part in a study shared with other processes (needs ``storage``): the
            trials of all of them total ``budget``, and the result holds every COMPLETE legal
            trial of the study (see the module docstring).

    Raises:
        InputError: Unknown or unavailable sampler, a storage that cannot be opened, or a
            shared study without storage, of another budget, or never set up.
    """
    import optuna

    if shared is not None:
        return _run_shared(space, predictor, seeds, budget, sampler, seed, storage, shared)
    result = StudyResult()
    if budget <= 0:
        return result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # experimental-feature notices of Optuna's samplers
        sampler_obj = _sampler(sampler, seed)
    store = make_storage(storage)
    t0 = time.perf_counter()
    objective_fn = _Objective(space, predictor)
    digest = hashlib.sha256(study_key.encode()).hexdigest()[:12]
    name = f"tiler-{digest}-{sampler}-{seed}-{uuid.uuid4().hex[:8]}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=name, storage=store, sampler=sampler_obj,
                                direction="minimize")  # fmt: skip

    def objective(trial: Any) -> float:
        value, ev = objective_fn.evaluate(trial)
        result.evaluations[predictor.key(ev.fields)] = ev
        result.history_us.append(ev.time_us if ev.legal else float("inf"))
        return value

    for params in objective_fn.seed_params(seeds[:budget]):
        study.enqueue_trial(params)
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
    result.local_trials = result.trials
    result.seconds = time.perf_counter() - t0
    result.study_name = name
    return result


def _worker_seed(seed: int, worker: str) -> int:
    """A sampler seed of its own for a joining worker (equal seeds would propose equal points)."""
    digest = hashlib.sha256(f"{seed}:{worker}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _open_shared(name: str, store: Any, sampler: str, seed: int, worker: str) -> tuple[Any, bool]:
    """Creates the study (returns True) or loads it when another process created it first."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            study = optuna.create_study(
                study_name=name, storage=store, sampler=_sampler(sampler, seed),
                direction="minimize",
            )  # fmt: skip
            return study, True
        except optuna.exceptions.DuplicatedStudyError:
            # Unlike load_if_exists=True, this tells the creator (who sets the study up) apart.
            pass
        study = optuna.load_study(
            study_name=name, storage=store, sampler=_sampler(sampler, _worker_seed(seed, worker))
        )
    return study, False


def _set_up(study: Any, slot_params: list[dict[str, int]], budget: int) -> None:
    """Enqueues every slot not yet enqueued, then marks the study ready.

    Slots, not ``enqueue_trial(skip_if_exists=True)``: two seeds may share parameters, and a
    lead that finishes a half-done setup must add exactly the missing trials.
    """
    have = {t.user_attrs.get("tiler_slot") for t in study.get_trials(deepcopy=False)}
    for slot in range(budget):
        if slot in have:
            continue
        params = slot_params[slot] if slot < len(slot_params) else {}
        study.enqueue_trial(params, user_attrs={"tiler_slot": slot})
    study.set_user_attr(READY_ATTR, budget)


def _wait_ready(study: Any, shared: SharedStudy, budget: int) -> None:
    deadline = time.monotonic() + shared.wait_s
    while True:
        ready = study.user_attrs.get(READY_ATTR)
        if ready is not None:
            if int(ready) != budget:
                raise InputError(
                    "study_name", "study_mismatch",
                    f"shared study {shared.name!r} was set up for a budget of {ready} trials, "
                    f"not {budget}", shared.name, ready,
                )  # fmt: skip
            return
        if time.monotonic() >= deadline:
            raise InputError(
                "study_name", "study_not_ready",
                f"shared study {shared.name!r} was not set up within {shared.wait_s} s (its "
                "creator stopped while enqueuing; a lead finishes the setup)", shared.name, None,
            )  # fmt: skip
        time.sleep(shared.poll_s)


def _pop_waiting(study: Any, store: Any) -> int | None:
    """Takes a WAITING trial (atomically, as ``Study.ask`` does) without ever creating one."""
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.trial import TrialState

    for trial in study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
        # FrozenTrial has no public id; the storage's compare-and-set needs it.
        trial_id = int(trial._trial_id)
        try:
            if store.set_trial_state_values(trial_id, state=TrialState.RUNNING):
                return trial_id
        except UpdateFinishedTrialError:
            continue
    return None


def _run_trials(study: Any, store: Any, objective: _Objective, worker: str) -> int:
    """Runs WAITING trials of the study until none is left; returns how many ran here."""
    import optuna
    from optuna.trial import TrialState

    ran = 0
    while (trial_id := _pop_waiting(study, store)) is not None:
        trial = optuna.trial.Trial(study, trial_id)
        trial.set_user_attr("tiler_worker", worker)
        try:
            value, ev = objective.evaluate(trial)
        except BaseException:
            study.tell(trial, state=TrialState.FAIL)
            raise
        trial.set_user_attr("tiler_fields", ev.fields)
        trial.set_user_attr("tiler_legal", ev.legal)
        trial.set_user_attr("tiler_simulated", ev.simulated)
        study.tell(trial, value)
        ran += 1
    return ran


def _settle(study: Any, store: Any, objective: _Objective, shared: SharedStudy) -> int:
    """Waits for the trials other processes run (running any still WAITING); returns ours."""
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.trial import TrialState

    ran = 0
    deadline = time.monotonic() + shared.wait_s
    while True:
        ran += _run_trials(study, store, objective, shared.worker)
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if not running or time.monotonic() >= deadline:
            return ran
        for trial in running:
            owner = trial.user_attrs.get("tiler_worker")
            if shared.is_alive is not None and owner and not shared.is_alive(str(owner)):
                # Its worker died mid-trial: the trial can never complete.
                with contextlib.suppress(UpdateFinishedTrialError):
                    store.set_trial_state_values(int(trial._trial_id), state=TrialState.FAIL)
        time.sleep(shared.poll_s)


def _run_shared(
    space: Space,
    predictor: Predictor,
    seeds: list[dict[str, int]],
    budget: int,
    sampler: str,
    seed: int,
    storage: str | None,
    shared: SharedStudy,
) -> StudyResult:
    from optuna.trial import TrialState

    result = StudyResult(study_name=shared.name)
    if budget <= 0:
        return result
    if storage is None:
        raise InputError("storage", "required", "a shared study needs a storage (an RDB URL "
                         "or a journal file)", None, None)  # fmt: skip
    t0 = time.perf_counter()
    store = make_storage(storage)
    study, created = _open_shared(shared.name, store, sampler, seed, shared.worker)
    objective = _Objective(space, predictor)
    with warnings.catch_warnings():
        # Optuna warns about experimental samplers and independent fallbacks; not our users'.
        warnings.simplefilter("ignore")
        if created or (shared.lead and study.user_attrs.get(READY_ATTR) is None):
            _set_up(study, objective.seed_params(seeds[:budget]), budget)
        _wait_ready(study, shared, budget)
        ran = _run_trials(study, store, objective, shared.worker)
        if shared.answer:
            ran += _settle(study, store, objective, shared)
    result.local_trials = ran
    trials = study.get_trials(deepcopy=False)
    result.trials = len(trials)
    if shared.answer:
        for trial in trials:
            attrs = trial.user_attrs
            if trial.state != TrialState.COMPLETE or not attrs.get("tiler_legal"):
                continue
            fields = {k: int(v) for k, v in attrs["tiler_fields"].items()}
            ev = Evaluation(fields, float(trial.value), bool(attrs["tiler_simulated"]), True)
            result.evaluations[predictor.key(fields)] = ev
    result.seconds = time.perf_counter() - t0
    return result


def waiting_trials(storage: str, name: str) -> int:
    """How many trials of a ready shared study still wait for a worker (0: none, or no study).

    Raises:
        InputError: The storage cannot be opened.
    """
    from optuna.trial import TrialState

    store = make_storage(storage)
    try:
        study_id = store.get_study_id_from_name(name)
    except KeyError:
        return 0
    if store.get_study_user_attrs(study_id).get(READY_ATTR) is None:
        return 0
    return len(store.get_all_trials(study_id, deepcopy=False, states=(TrialState.WAITING,)))


def key_of(obj: Any) -> str:
    """A stable text key of a JSON-ready object."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


ObjectiveFn = Callable[[dict[str, int]], Evaluation]
