"""The profiler CSV layout (``../shared/reference/measured_msprof_910b1_8192.csv``) as measurements.

Columns (any order; unknown columns are refused, so a misspelt one is never ignored):

* problem keys: ``soc, m, n, k, dtype, out_dtype, format_a, format_b, format_c, trans_a,
  trans_b, bias, template`` (as in ``tilings:tune``);
* TCubeTiling fields under their struct names (``usedCoreNum, singleCoreM, ..., stepKb``);
* kernel options ``l2_rounds, constant_tiling, unit_flag``; as in the profiler file, a row's
  ``singleCoreM`` is one L2 round's rows, so a core's share (the struct's ``singleCoreM``, what
  ``POST /v1/measurements`` takes) is ``l2_rounds`` of them (``Problem.l2_rounds``);
* profiler columns: ``task_duration_us`` (the device time), ``time_us`` (end to end),
  ``aicore_time_avg_us``, ``mac_us``, ``scalar_us``, ``mte1_us``, ``mte2_us``, ``fixpipe_us``;
* provenance: ``case``, ``source``, ``cann_version``, ``clock_mhz``, ``note``.

A malformed value raises :class:`CsvError` naming the row and the column. An empty cell means the
source did not state it: a problem key then takes the problem's documented default (``soc``,
``m``, ``n``, ``k`` must be stated), and a tiling field is derived by :func:`fill_tiling` when
the template's defaults give it; otherwise the row is skipped with its reason.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.feedback.measurements import MeasurementIn
from app.schemas import TilingIn
from simcore.tiling.problem import Problem

PROBLEM_COLUMNS = (
    "soc", "m", "n", "k", "dtype", "out_dtype", "format_a", "format_b", "format_c", "trans_a",
    "trans_b", "bias", "template",
)  # fmt: skip
TILING_COLUMNS = tuple(TilingIn.model_fields)
#: Kernel options and their defaults (one L2 round, a runtime tiling, no UnitFlag).
OPTION_DEFAULTS: dict[str, int] = {"l2_rounds": 1, "constant_tiling": 0, "unit_flag": 0}
#: Profiler column -> (measured key, pipe or None).
MEASURE_COLUMNS: dict[str, tuple[str, str | None]] = {
    "task_duration_us": ("device_time_us", None),
    "time_us": ("time_us", None),
    "aicore_time_avg_us": ("core_time_avg_us", None),
    "mac_us": ("pipe_busy_us", "M"),
    "scalar_us": ("pipe_busy_us", "SCALAR"),
    "mte1_us": ("pipe_busy_us", "MTE1"),
    "mte2_us": ("pipe_busy_us", "MTE2"),
    "fixpipe_us": ("pipe_busy_us", "FIX"),
}
META_COLUMNS = ("case", "source", "cann_version", "clock_mhz", "note")
KNOWN_COLUMNS = frozenset(
    (*PROBLEM_COLUMNS, *TILING_COLUMNS, *OPTION_DEFAULTS, *MEASURE_COLUMNS, *META_COLUMNS)
)
_BOOL = {"0": False, "1": True, "false": False, "true": True}
_INT_PROBLEM = ("m", "n", "k")
_BOOL_PROBLEM = ("trans_a", "trans_b", "bias")


class CsvError(ValueError):
    """A malformed CSV value: its row, its column, the value and what was expected.

    Rows count from 1 at the first row after the header; 0 is the header.
    """

    def __init__(self, row: int, column: str, value: Any, message: str) -> None:
        super().__init__(f"row {row}, column {column!r}: {message} (value {value!r})")
        self.row = row
        self.column = column
        self.value = value
        self.message = message

    def to_dict(self) -> dict[str, Any]:
        """The error as the 422 answer lists it."""
        return {
            "field": f"row {self.row}.{self.column}",
            "rule": "csv_value",
            "message": str(self),
            "value": self.value,
            "limit": self.message,
            "row": self.row,
            "column": self.column,
        }


@dataclass
class CsvRow:
    """A parsed row: its measurement, provenance and kernel options."""

    row: int
    measurement: MeasurementIn
    source: str
    options: dict[str, int] | None


def _int(row: int, column: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CsvError(row, column, text, "an integer") from None


def _float(row: int, column: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CsvError(row, column, text, "a number") from None
    if not math.isfinite(value) or value < 0:
        raise CsvError(row, column, text, "a finite number >= 0")
    return value


def fill_tiling(fields: dict[str, int]) -> str | None:
    """Derives unstated L1 steps and depths by the templates' defaults, in place.

    * ``stepM``, ``stepN``: 1 (the tiling API's default; the MDL template forces it whenever
      the operand's K is not resident in L1, MDL_STEP_M / MDL_STEP_N);
    * ``stepKa`` from ``depthA1`` (``stepKb`` from ``depthB1``): L1 double-buffered,
      ``depthA1 = 2 x stepM x stepKa`` (the layout of the stated MDL rows of the shared file,
      e.g. depthA1 16 = 2 x 1 x 8); a depth of 1 is a single buffer of one block;
    * ``depthA1`` from ``stepKa`` the same way.

    Returns:
        None when every required field is now known, else why the row cannot be completed.
    """
    for step in ("stepM", "stepN"):
        fields.setdefault(step, 1)
    for depth, step_k, step_mn in (("depthA1", "stepKa", "stepM"), ("depthB1", "stepKb", "stepN")):
        if depth not in fields and step_k not in fields:
            return f"{depth} and {step_k} are both empty: neither follows from the other"
        if step_k not in fields:
            per_buffer = fields[step_mn] * 2
            if fields[depth] == 1:
                fields[step_k] = 1
            elif fields[depth] % per_buffer:
                return (
                    f"{step_k} is empty and {depth} = {fields[depth]} is not 2 x {step_mn} x "
                    f"{step_k} for any {step_k}"
                )
            else:
                fields[step_k] = fields[depth] // per_buffer
        fields.setdefault(depth, 2 * fields[step_mn] * fields[step_k])
    for name in ("usedCoreNum", "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK"):
        if name not in fields:
            return f"{name} is empty and no template default gives it"
    return None


def _problem(row: int, cells: dict[str, str]) -> tuple[dict[str, Any] | None, str | None]:
    for name in ("soc", "m", "n", "k"):
        if not cells.get(name):
            return None, f"{name} is empty: the problem is not stated"
    problem: dict[str, Any] = {}
    for name in PROBLEM_COLUMNS:
        text = cells.get(name, "")
        if not text:
            continue
        if name in _INT_PROBLEM:
            problem[name] = _int(row, name, text)
        elif name in _BOOL_PROBLEM:
            if text.lower() not in _BOOL:
                raise CsvError(row, name, text, "0, 1, true or false")
            problem[name] = _BOOL[text.lower()]
        else:
            problem[name] = text
    return problem, None


def _measured(row: int, cells: dict[str, str]) -> dict[str, Any]:
    measured: dict[str, Any] = {}
    for column, (key, pipe) in MEASURE_COLUMNS.items():
        text = cells.get(column, "")
        if not text:
            continue
        value = _float(row, column, text)
        if pipe is None:
            measured[key] = value
        else:
            measured.setdefault("pipe_busy_us", {})[pipe] = value
    return measured


def _options(
    row: int, cells: dict[str, str], problem: dict[str, Any]
) -> tuple[dict[str, int] | None, str | None]:
    options: dict[str, int] = {}
    for name, default in OPTION_DEFAULTS.items():
        text = cells.get(name, "")
        if not text:
            continue
        value = _int(row, name, text)
        if name in Problem.model_fields:
            problem[name] = value if name == "l2_rounds" else bool(value)
        elif value != default:
            return None, (
                f"{name} = {value}: the model (this version) has no such kernel option, so the "
                "kernel it measured cannot be priced"
            )
        else:
            options[name] = value
    return options or None, None


def _validation_error(row: int, exc: ValidationError, where: str) -> CsvError:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    column = loc[1] if len(loc) > 1 and loc[0] == where else (loc[0] if loc else where)
    return CsvError(row, column, err.get("input"), err["msg"])


def parse_csv(text: str, filename: str) -> tuple[list[CsvRow], list[dict[str, Any]]]:
    """Parses a measurement CSV.

    Args:
        text: The file's text.
        filename: Its name, for the provenance (``csv:<file>:<case or row>``).

    Returns:
        The rows to import and the skipped rows (``row``, ``case``, ``reason``).

    Raises:
        CsvError: A malformed value, an unknown column or a missing header (row and column
            named); nothing of the file may then be stored.
    """
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = reader.fieldnames or []
        rows = list(reader)
    except csv.Error as exc:
        # The csv module's own refusals (a NUL byte, a line break inside an unquoted field):
        # malformed at the line it stopped on (line_num counts the lines read before it: the
        # header is row 0), never a server error.
        raise CsvError(reader.line_num, "csv", None, f"well-formed CSV ({exc})") from exc
    if not header:
        raise CsvError(0, "header", None, "a header row with the column names")
    for column in header:
        if column not in KNOWN_COLUMNS:
            raise CsvError(0, column, column, "a known column (docs/service.md)")
    parsed: list[CsvRow] = []
    skipped: list[dict[str, Any]] = []
    for index, raw in enumerate(rows, start=1):
        if None in raw:
            raise CsvError(index, "row", raw[None], f"{len(header)} cells, as the header")
        cells = {k: (v or "").strip() for k, v in raw.items()}
        case = cells.get("case") or str(index)
        reason = _row(index, cells, filename, case, parsed)
        if reason is not None:
            skipped.append({"row": index, "case": case, "reason": reason})
    return parsed, skipped


def _row(
    index: int, cells: dict[str, str], filename: str, case: str, out: list[CsvRow]
) -> str | None:
    problem, reason = _problem(index, cells)
    tiling = {name: _int(index, name, cells[name]) for name in TILING_COLUMNS if cells.get(name)}
    measured = _measured(index, cells)
    device: dict[str, Any] = {"soc": cells.get("soc") or None}
    if cells.get("cann_version"):
        device["cann_version"] = cells["cann_version"]
    if cells.get("clock_mhz"):
        device["clock_mhz"] = _float(index, "clock_mhz", cells["clock_mhz"])
    if problem is None:
        return reason
    options, reason = _options(index, cells, problem)
    if reason is not None:
        return reason
    reason = fill_tiling(tiling)
    if reason is not None:
        return reason
    # The file's singleCoreM is one round's rows; the struct's is the core's share.
    tiling["singleCoreM"] *= int(problem.get("l2_rounds", 1))
    if not measured.get("device_time_us") and not measured.get("time_us"):
        return "task_duration_us and time_us are both empty: no time was measured"
    body: dict[str, Any] = {
        "problem": problem,
        "tiling": tiling,
        "measured": measured,
        "device": device,
    }
    if cells.get("note"):
        body["note"] = cells["note"]
    try:
        measurement = MeasurementIn.model_validate(body)
    except ValidationError as exc:
        where = str(exc.errors()[0]["loc"][0])
        raise _validation_error(index, exc, where) from None
    out.append(CsvRow(index, measurement, f"csv:{filename}:{case}", options))
    return None
