"""Calibration profiles: the model's named constants fitted to a SoC's measured kernels.

A *profile* is a set of overrides of a preset's model constants (the fields of
:class:`simcore.hardware.presets.HardwarePreset` that ``model_constants.json`` documents), so the
profile's preset is :func:`simcore.hardware.presets.custom_preset` of the SoC with them, and its
digest differs from the default preset's (a cache key with it never serves another profile).

:func:`fit_profile` fits the constants named in a list (:data:`DEFAULT_CONSTANTS`, plus any that
``model_constants.json`` marks ``"fittable": true``, so new mechanisms plug in by name) with
``scipy.optimize.least_squares`` (trust-region reflective, bounded). Each constant is fitted as a
log-scale factor on its default, bounded to [1/:data:`SCALE_BOUND`, :data:`SCALE_BOUND`]; the
residual of a measurement is log(predicted / measured), so every kernel counts alike whatever its
size. Predictions use the estimator (:func:`simcore.estimate.estimator.estimate_arrays`), which
agrees with the simulator to a few % and prices every kernel of a problem in one vectorized call.

Which constants the data can determine is decided before the fit, from the sensitivities at the
defaults: a constant no measurement depends on, one that is (nearly) a combination of constants
already chosen (QR with column pivoting), or one beyond the measurements' count less one, keeps
its default and is reported with the reason; after the fit a constant whose uncertainty is wider
than a factor of :data:`MAX_UNCERTAINTY_FACTOR` is likewise reverted. Errors are reported on the
training data and by k-fold cross-validation, before (the defaults) and after.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from simcore.estimate.estimator import ESTIMATOR_FIELDS, estimate_arrays
from simcore.hardware.presets import HardwarePreset, custom_preset, load_preset
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from simcore.version import MODEL_VERSION
from tiler.measured import at_clock, predicted_us

FloatArray = npt.NDArray[np.float64]

#: The constants fitted by default: per-copy latencies and peak rates of the copy pipes, the
#: L2 / HBM rates, the cube's per-MMAD overhead, FixPipe, and the launch overhead.
DEFAULT_CONSTANTS: tuple[str, ...] = (
    "gm_to_l1_latency_cycles",
    "gm_to_l1_peak_bytes_per_cycle",
    "nd2nz_latency_cycles",
    "nd2nz_peak_bytes_per_cycle",
    "l2_bytes_per_cycle_per_core",
    "hbm_bytes_per_cycle_per_core",
    "mte1_latency_cycles",
    "l1_to_l0a_bytes_per_cycle",
    "l1_to_l0b_bytes_per_cycle",
    "mmad_overhead_cycles",
    "fixpipe_min_cycles",
    "fixpipe_bytes_per_cycle",
    "launch_overhead_us",
)
#: A constant may move by at most this factor from its default, either way.
SCALE_BOUND = 4.0
#: Standard errors in a reported uncertainty (about a 95 % interval).
UNCERTAINTY_SIGMAS = 2.0
#: A fitted constant whose 1-sigma uncertainty exceeds this factor keeps its default.
MAX_UNCERTAINTY_FACTOR = 2.0
#: Relative size of a pivot of the sensitivity matrix below which a constant counts as
#: collinear with the ones chosen before it.
COLLINEAR_RTOL = 1e-3
#: Measurements per fitted constant at least (beyond the first): with fewer the fit follows the
#: noise of a few kernels and its held-out error grows.
MEASUREMENTS_PER_CONSTANT = 2
#: Robust loss of the fit: a kernel the model's mechanisms miss (an outlier in log error) pulls
#: the constants less than under plain least squares.
LOSS = "soft_l1"
#: Log error at which the robust loss starts to flatten (about 10 %).
LOSS_SCALE = 0.1
#: Log-scale step of the finite-difference sensitivities.
_STEP = 0.02
#: The error a profile must lower on the held-out folds to be activatable: the median |relative
#: error| (the project's accuracy figure, issue 17), robust to one kernel whose mechanism the
#: model lacks.
DECISION_ERROR = "median_abs_error"
#: Folds of the cross-validation (fewer when there are fewer measurements).
DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class Observation:
    """One measured kernel as the fit sees it.

    Attributes:
        problem: The Matmul.
        tiling: Its complete TCubeTiling.
        kind: ``device_time_us`` or ``time_us`` (what was measured).
        measured_us: The measured time.
        clock_mhz: The AI Core clock it ran at, when stated (else the preset's).
    """

    problem: Problem
    tiling: TCubeTiling
    kind: str
    measured_us: float
    clock_mhz: float | None = None


def fittable_constants(preset: HardwarePreset) -> list[str]:
    """:data:`DEFAULT_CONSTANTS` plus the constants ``model_constants.json`` marks fittable.

    Only names that are fields of the preset and have a positive default are returned (a
    constant is fitted as a factor on its default).
    """
    names = list(DEFAULT_CONSTANTS)
    data = json.loads(
        resources.files("simcore.hardware.data").joinpath("model_constants.json").read_text()
    )
    family = data.get(str(preset.npu_arch), {})
    if isinstance(family, dict):
        for name, entry in family.items():
            if isinstance(entry, dict) and entry.get("fittable") and name not in names:
                names.append(name)
    values = preset.model_dump()
    return [n for n in names if isinstance(values.get(n), int | float) and values[n] > 0]


def profile_preset(soc: str, constants: Mapping[str, float]) -> HardwarePreset:
    """The preset of a profile: the SoC's packaged preset with the constants overridden."""
    if not constants:
        return load_preset(soc)
    return custom_preset({"base": soc, **constants})


def profile_digest(soc: str, constants: Mapping[str, float]) -> str:
    """SHA-256 of a profile's canonical JSON (SoC, model version, constants)."""
    doc = {"soc": soc, "model_version": MODEL_VERSION, "constants": dict(sorted(constants.items()))}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


class Predictor:
    """Predicts every observation under a preset, one estimator call per problem.

    Calling it with a preset returns the model's figure for each observation (its ``kind``).
    """

    def __init__(self, observations: Sequence[Observation]) -> None:
        self.observations = list(observations)
        groups: dict[str, list[int]] = {}
        for i, obs in enumerate(self.observations):
            groups.setdefault(f"{obs.problem.model_dump_json()}@{obs.clock_mhz}", []).append(i)
        self.groups = [
            (
                self.observations[idx[0]].problem,
                self.observations[idx[0]].clock_mhz,
                np.asarray(idx),
                {
                    f: np.asarray([getattr(self.observations[i].tiling, f) for i in idx])
                    for f in ESTIMATOR_FIELDS
                },
            )
            for idx in groups.values()
        ]
        self.measured = np.asarray([o.measured_us for o in self.observations])

    def __call__(self, preset: HardwarePreset, rows: npt.NDArray[np.int64] | None = None) -> Any:
        """The model's figure of each observation (of ``rows`` only, when given) on ``preset``."""
        out = np.empty(len(self.observations))
        for problem, clock_mhz, idx, fields in self.groups:
            est = estimate_arrays(problem, at_clock(preset, clock_mhz), fields)
            times = np.asarray(est["time_us"], dtype=float).reshape(-1)
            device = est.get("device_time_us")
            for j, i in enumerate(idx):
                figure = {"time_us": times[j], "launch_overhead_us": preset.launch_overhead_us}
                if device is not None:
                    figure["device_time_us"] = float(np.asarray(device).reshape(-1)[j])
                out[i] = predicted_us(figure, self.observations[i].kind)
        return out if rows is None else out[rows]


def _errors(predicted: FloatArray, measured: FloatArray) -> dict[str, float]:
    rel = np.abs(predicted - measured) / measured
    return {
        "mean_abs_error": float(rel.mean()) if rel.size else float("nan"),
        "median_abs_error": float(np.median(rel)) if rel.size else float("nan"),
        "rms_log_error": float(np.sqrt(np.mean(np.log(predicted / measured) ** 2)))
        if rel.size
        else float("nan"),
    }


@dataclass
class _Fit:
    values: dict[str, float]
    fitted: list[str]
    undetermined: dict[str, str]
    sigma_log: dict[str, float]


class _Problem:
    """The least-squares problem over one subset of the observations."""

    def __init__(
        self, soc: str, names: Sequence[str], predictor: Predictor, rows: npt.NDArray[np.int64]
    ) -> None:
        self.soc = soc
        self.names = list(names)
        self.predictor = predictor
        self.rows = rows
        base = load_preset(soc).model_dump()
        self.defaults = {n: float(base[n]) for n in self.names}

    def values(self, names: Sequence[str], x: FloatArray) -> dict[str, float]:
        return {n: self.defaults[n] * math.exp(float(v)) for n, v in zip(names, x, strict=True)}

    def residuals(self, names: Sequence[str], x: FloatArray) -> FloatArray:
        preset = profile_preset(self.soc, self.values(names, x))
        predicted = self.predictor(preset, self.rows)
        residual: FloatArray = np.log(
            np.maximum(predicted, 1e-12) / self.predictor.measured[self.rows]
        )
        return residual

    def jacobian(self, names: Sequence[str], x: FloatArray) -> FloatArray:
        # Central differences: the model takes maxima of pipe times, so a constant can move a
        # kernel's time on one side only (FixPipe binds when slower, not when faster).
        cols = []
        for i in range(len(names)):
            step = np.zeros_like(x)
            step[i] = _STEP
            up, down = self.residuals(names, x + step), self.residuals(names, x - step)
            cols.append((up - down) / (2 * _STEP))
        return np.stack(cols, axis=1) if cols else np.zeros((self.rows.size, 0))


def sensitivities(
    soc: str, observations: Sequence[Observation], names: Sequence[str]
) -> FloatArray:
    """The sensitivities d log(time) / d log(constant) of each observation (default constants)."""
    predictor = Predictor(observations)
    prob = _Problem(soc, names, predictor, np.arange(len(observations)))
    return prob.jacobian(list(names), np.zeros(len(names)))


def _select(prob: _Problem) -> tuple[list[str], dict[str, str]]:
    """The constants the data can determine, and why each other one cannot."""
    from scipy.linalg import qr

    undetermined: dict[str, str] = {}
    jac = prob.jacobian(prob.names, np.zeros(len(prob.names)))
    norms = np.linalg.norm(jac, axis=0)
    sensitive = [n for n, s in zip(prob.names, norms, strict=True) if s > 1e-6]
    for n, s in zip(prob.names, norms, strict=True):
        if s <= 1e-6:
            undetermined[n] = "no measured kernel depends on it"
    if not sensitive:
        return [], undetermined
    cols = jac[:, [prob.names.index(n) for n in sensitive]]
    _q, r, piv = qr(cols, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    top = diag[0] if diag.size else 0.0
    chosen: list[str] = []
    budget = max(0, (len(prob.rows) - 1) // MEASUREMENTS_PER_CONSTANT)
    for rank, col in enumerate(piv):
        name = sensitive[int(col)]
        if rank >= diag.size or diag[rank] <= COLLINEAR_RTOL * top:
            undetermined[name] = "collinear with " + ", ".join(chosen or sensitive[:1])
        elif len(chosen) >= budget:
            undetermined[name] = (
                f"too few measurements: {len(prob.rows)} determine at most {budget} constants"
            )
        else:
            chosen.append(name)
    return [n for n in prob.names if n in chosen], undetermined


def _sigmas(names: Sequence[str], jac: FloatArray, s2: float) -> dict[str, float]:
    """Standard errors of the log-scale factors.

    Infinite where the data do not constrain one (a zero column, or a singular normal matrix).
    """
    normal = jac.T @ jac
    if np.linalg.matrix_rank(normal) < len(names) or np.any(np.linalg.norm(jac, axis=0) < 1e-9):
        inv = np.full(normal.shape, np.inf)
        for i in np.flatnonzero(np.linalg.norm(jac, axis=0) >= 1e-9):
            inv[i, i] = 1.0 / normal[i, i]
        # Only a rough per-constant figure is left; the caller reverts the infinite ones.
        return {n: float(math.sqrt(inv[i, i] * s2)) if math.isfinite(inv[i, i]) else math.inf
                for i, n in enumerate(names)}  # fmt: skip
    cov = np.linalg.inv(normal) * s2
    return {n: float(math.sqrt(max(cov[i, i], 0.0))) for i, n in enumerate(names)}


def _fit(prob: _Problem) -> _Fit:
    from scipy.optimize import least_squares

    names, undetermined = _select(prob)
    sigma: dict[str, float] = {}
    x = np.zeros(len(names))
    for _round in range(3):
        if not names:
            break
        bound = math.log(SCALE_BOUND)
        result = least_squares(
            lambda v, names=names: prob.residuals(names, v),
            np.zeros(len(names)),
            bounds=(-bound, bound),
            method="trf",
            jac="3-point",
            diff_step=_STEP,
            x_scale=1.0,
            loss=LOSS,
            f_scale=LOSS_SCALE,
        )
        x = result.x
        jac = prob.jacobian(names, x)
        dof = max(1, len(prob.rows) - len(names))
        s2 = float(np.sum(result.fun**2)) / dof
        sigma = _sigmas(names, jac, s2)
        wide = [n for n in names if sigma[n] > math.log(MAX_UNCERTAINTY_FACTOR)]
        if not wide:
            break
        for n in wide:
            undetermined[n] = (
                f"its uncertainty after the fit is wider than a factor {MAX_UNCERTAINTY_FACTOR:g}"
            )
        names = [n for n in names if n not in wide]
        x = np.zeros(len(names))
        sigma = {}
    return _Fit(prob.values(names, x), names, undetermined, sigma)


def _folds(n: int, k: int, seed: int) -> list[npt.NDArray[np.int64]]:
    order = np.random.default_rng(seed).permutation(n)
    return [np.sort(part) for part in np.array_split(order, k) if part.size]


def fit_profile(
    soc: str,
    observations: Sequence[Observation],
    names: Sequence[str] | None = None,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> dict[str, Any]:
    """Fits a calibration profile of ``soc`` to measured kernels, with k-fold validation.

    Args:
        soc: The SoC (every observation's problem is on it).
        observations: The measured kernels.
        names: The constants to fit (default :func:`fittable_constants`).
        folds: Folds of the cross-validation (at most the number of observations; below 2 the
            cross-validation is skipped).
        seed: Seed of the fold assignment.

    Returns:
        ``profile`` (``soc``, ``model_version``, ``constants``: the fitted ones only, ``digest``)
        and ``report``: ``constants`` (each with ``default``, ``value``, ``uncertainty`` (about
        95 %: :data:`UNCERTAINTY_SIGMAS` standard errors, same unit), ``bounds``,
        ``determined`` and, when not, ``reason``), ``errors`` (``train`` and
        ``cross_validation``, each ``before`` / ``after``), ``activatable``
        (the cross-validated :data:`DECISION_ERROR` after is below the default's),
        ``measurements``, ``folds``.

    Raises:
        ValueError: No observations, or one is not on ``soc``.
    """
    if not observations:
        raise ValueError(f"no measurements of {soc} to fit")
    for obs in observations:
        if obs.problem.soc != soc:
            raise ValueError(f"a measurement is on {obs.problem.soc}, not {soc}")
    preset = load_preset(soc)
    names = list(names) if names is not None else fittable_constants(preset)
    predictor = Predictor(observations)
    everything = np.arange(len(observations))
    fit = _fit(_Problem(soc, names, predictor, everything))
    measured = predictor.measured
    default_pred = predictor(preset)
    fitted_pred = predictor(profile_preset(soc, fit.values))
    cv = _cross_validate(soc, names, predictor, folds, seed)
    base = preset.model_dump()
    report_constants = {}
    for n in names:
        entry: dict[str, Any] = {
            "default": float(base[n]),
            "value": fit.values.get(n, float(base[n])),
            "bounds": [float(base[n]) / SCALE_BOUND, float(base[n]) * SCALE_BOUND],
            "determined": n in fit.fitted,
        }
        if n in fit.fitted:
            # 95 % (two standard errors of the log-scale factor), in the constant's unit.
            wide = math.exp(UNCERTAINTY_SIGMAS * fit.sigma_log[n]) - 1.0
            entry["uncertainty"] = fit.values[n] * wide
            entry["relative_uncertainty"] = wide
        else:
            entry["uncertainty"] = None
            entry["reason"] = fit.undetermined.get(n, "not fitted")
        report_constants[n] = entry
    constants = {n: fit.values[n] for n in fit.fitted}
    activatable = bool(
        cv is not None and cv["after"][DECISION_ERROR] < cv["before"][DECISION_ERROR]
    )
    return {
        "profile": {
            "soc": soc,
            "model_version": MODEL_VERSION,
            "constants": constants,
            "digest": profile_digest(soc, constants),
        },
        "report": {
            "constants": report_constants,
            "errors": {
                "train": {
                    "before": _errors(default_pred, measured),
                    "after": _errors(fitted_pred, measured),
                },
                "cross_validation": cv,
            },
            "activatable": activatable,
            "measurements": len(observations),
            "folds": None if cv is None else cv["folds"],
            "predictor": "estimator (simcore.estimate.estimator.estimate_arrays)",
        },
    }


def _cross_validate(
    soc: str, names: Sequence[str], predictor: Predictor, folds: int, seed: int
) -> dict[str, Any] | None:
    """Held-out errors of the default and of a profile fitted on the other folds."""
    n = len(predictor.observations)
    k = min(folds, n)
    if k < 2:
        return None
    default_pred = predictor(load_preset(soc))
    held_before: list[float] = []
    held_after: list[float] = []
    train_before: list[float] = []
    train_after: list[float] = []
    held_idx: list[int] = []
    for part in _folds(n, k, seed):
        train = np.setdiff1d(np.arange(n), part)
        fit = _fit(_Problem(soc, names, predictor, train))
        pred = predictor(profile_preset(soc, fit.values))
        held_idx.extend(int(i) for i in part)
        held_before.extend(default_pred[part])
        held_after.extend(pred[part])
        train_before.append(
            _errors(default_pred[train], predictor.measured[train])["mean_abs_error"]
        )
        train_after.append(_errors(pred[train], predictor.measured[train])["mean_abs_error"])
    measured = predictor.measured[np.asarray(held_idx)]
    return {
        "folds": k,
        "before": _errors(np.asarray(held_before), measured),
        "after": _errors(np.asarray(held_after), measured),
        "training_folds": {
            "metric": DECISION_ERROR,
            "before": float(np.mean(train_before)),
            "after": float(np.mean(train_after)),
        },
    }
