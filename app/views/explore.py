"""The explorer: a small server-rendered page to tune a problem and look at why the tiling wins.

``GET /explore`` shows a problem form; submitted (its fields as query parameters) it tunes the
problem exactly as ``POST /v1/tilings:tune`` does (the same request and cache key, the cache, the
single-flight and the bounded search pool; with ``TILER_API_TOKEN`` set, a search needs the
token, and without it the page shows stored answers only) and shows the tuned TCubeTiling, its
predicted time against the baselines, the explanation, the pipeline timeline and the roofline.
The tiling is an editable table: changing a field and pressing *Re-evaluate* posts it to
``POST /explore/evaluate``, which checks and predicts that tiling
(:func:`simcore.evaluate.evaluate`) and draws its timeline
(:func:`simcore.pipeline.simulator.simulate`) in the search pool, next to the tuned reference.

Plain HTML forms, no script: every state is a URL or a form post, so the page is easy to test and
works without JavaScript. Bad input answers 422 with the offending field named on the page; an
illegal tiling answers 422 with every violated rule listed.
"""

from __future__ import annotations

import hmac
import html
import json
import math
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from app.api.middleware import bearer_token_matches
from app.problem_json import ProblemError
from app.schemas import TuneBody
from app.tuning import TuningService
from app.views import svg
from app.views.measured import measure_form
from simcore.errors import InputError, UnknownSocError
from simcore.evaluate import evaluate, parse_request
from simcore.hardware.dtypes import INPUT_DTYPES, DType
from simcore.hardware.presets import HardwarePreset, list_socs, load_preset
from simcore.pipeline.simulator import SimResult
from simcore.tiling.problem import Problem, parse_problem
from simcore.tiling.tcube import DERIVED_FIELDS, FIELD_ORDER, REQUIRED_FIELDS, TCubeTiling

__all__ = ["EDITABLE_FIELDS", "render_answer", "render_evaluate", "router"]

router = APIRouter()

#: Fields taken from the problem (K is never split across cores), never edited on the page.
PROBLEM_FIELDS: tuple[str, ...] = ("M", "N", "Ka", "Kb", "singleCoreK", "isBias")
#: Fields the page lets a user change; the others are recomputed from these and the problem.
EDITABLE_FIELDS: tuple[str, ...] = tuple(
    f for f in FIELD_ORDER if f not in PROBLEM_FIELDS and f not in DERIVED_FIELDS
)
#: The editable fields shown first (the rest sit in a collapsed "other fields" block).
MAIN_FIELDS: tuple[str, ...] = (*REQUIRED_FIELDS, "iterateOrder", "dbL0A", "dbL0B", "dbL0C")

_INT_PROBLEM_KEYS = ("m", "n", "k")
_BOOL_PROBLEM_KEYS = ("trans_a", "trans_b", "bias")
_CHOICE_PROBLEM_KEYS = (
    "soc", "dtype", "out_dtype", "format_a", "format_b", "format_c", "bias_dtype", "template",
)  # fmt: skip
_PROBLEM_KEYS = _INT_PROBLEM_KEYS + _BOOL_PROBLEM_KEYS + _CHOICE_PROBLEM_KEYS

#: Layouts of A and B in GM the form offers (DN: the Matmul API's COLUMN_MAJOR, arch 3510).
_INPUT_FORMATS = ("ND", "NZ", "DN")
_OUTPUT_DTYPES = ("fp16", "bf16", "fp32", "int8", "int32")
_BIAS_DTYPES = ("fp16", "bf16", "fp32", "int32")

_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.2rem 2rem; color: #222; max-width: 1100px; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 1.6rem; }
fieldset { border: 1px solid #ccc; margin-bottom: .6rem; }
label { display: inline-block; margin: .2rem .8rem .2rem 0; }
input[type=number], input[type=text] { width: 7.5rem; }
table { border-collapse: collapse; margin: .4rem 0; }
td, th { border: 1px solid #ddd; padding: .15rem .5rem; text-align: left; font-size: .9rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.error { background: #fdecea; border: 1px solid #d62728; padding: .6rem 1rem; }
.summary { font-size: 1.1rem; }
.note { color: #555; font-size: .9rem; }
.pictures svg { max-width: 100%; height: auto; border: 1px solid #eee; margin: .3rem 0; }
dl { margin: .2rem 0; } dt { font-weight: bold; margin-top: .3rem; } dd { margin-left: 1rem; }
.columns { display: flex; gap: 2rem; align-items: flex-start; flex-wrap: wrap; }
.columns > * { flex: 1 1 320px; }
table.kv th, table.grid th { font-weight: normal; color: #444; }
"""


# --------------------------------------------------------------------------------------------
# Input parsing
# --------------------------------------------------------------------------------------------


def problem_from_form(form: Mapping[str, str]) -> dict[str, Any]:
    """Builds the problem dict (the keys of ``tiler evaluate``) from form fields.

    Empty fields are left out so the problem's own defaults apply; checkboxes are true when
    present.

    Raises:
        InputError: m, n or k is missing or not an integer.
    """
    data: dict[str, Any] = {}
    for key in _INT_PROBLEM_KEYS:
        raw = form.get(key, "").strip()
        if not raw:
            raise InputError(f"problem.{key}", "required", f"{key} is required")
        data[key] = _parse_int(f"problem.{key}", raw)
    for key in _BOOL_PROBLEM_KEYS:
        data[key] = form.get(key, "") not in ("", "0", "false", "off")
    for key in _CHOICE_PROBLEM_KEYS:
        raw = form.get(key, "").strip()
        if raw:
            data[key] = raw
    return data


def tiling_from_form(form: Mapping[str, str]) -> dict[str, int]:
    """Reads the editable TCubeTiling fields (struct names) from form fields; blanks left out.

    Raises:
        InputError: A field is not an integer.
    """
    out: dict[str, int] = {}
    for name in EDITABLE_FIELDS:
        raw = form.get(name, "").strip()
        if raw:
            out[name] = _parse_int(f"tiling.{name}", raw)
    return out


def _parse_int(field: str, raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise InputError(field, "type", f"{field} must be an integer, got {raw!r}", raw) from None


def _reference_from_form(form: Mapping[str, str]) -> dict[str, Any] | None:
    """The tuned tiling's figures carried along in a hidden field (ignored when malformed)."""
    try:
        ref = json.loads(form.get("ref", "") or "null")
    except ValueError:
        return None
    if not isinstance(ref, dict) or not isinstance(ref.get("time_us"), int | float):
        return None
    return ref


# --------------------------------------------------------------------------------------------
# Page pieces
# --------------------------------------------------------------------------------------------


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    return str(value)


def _select(name: str, options: tuple[str, ...], chosen: str, blank: str | None = None) -> str:
    opts = [f"<option value=''>{_e(blank)}</option>"] if blank is not None else []
    for opt in options:
        sel = " selected" if opt == chosen else ""
        opts.append(f"<option value='{_e(opt)}'{sel}>{_e(opt)}</option>")
    return f"<select name='{name}' id='f-{name}'>{''.join(opts)}</select>"


def _problem_form(form: Mapping[str, str]) -> str:
    """The problem form, filled with what the user last entered."""
    g = form.get
    dtypes = tuple(d.value for d in INPUT_DTYPES)
    nums = "".join(
        f"<label>{key} <input type='number' min='1' name='{key}' id='f-{key}' "
        f"value='{_e(g(key, ''))}' required></label>"
        for key in _INT_PROBLEM_KEYS
    )
    checks = "".join(
        f"<label><input type='checkbox' name='{key}' id='f-{key}' value='1'"
        f"{' checked' if g(key) else ''}> {key}</label>"
        for key in _BOOL_PROBLEM_KEYS
    )
    # DN (column-major) inputs exist on arch 3510 only; another chip answers DN_NEEDS_ARCH_3510.
    layouts = {"format_a": _INPUT_FORMATS, "format_b": _INPUT_FORMATS, "format_c": ("ND", "NZ")}
    formats = "".join(
        f"<label>{key} {_select(key, options, g(key, 'ND'))}</label>"
        for key, options in layouts.items()
    )
    formats += "<span class='note' id='dn-note'>DN (column-major A or B): Ascend 950 only</span>"
    return (
        "<form id='problem-form' method='get' action='/explore'>"
        "<fieldset><legend>Problem: C[M, N] = A[M, K] · B[K, N]</legend>"
        f"<label>soc {_select('soc', list_socs(), g('soc', 'Ascend910B2'))}</label>{nums}<br>"
        f"<label>dtype {_select('dtype', dtypes, g('dtype', DType.FP16.value))}</label>"
        f"<label>out_dtype {_select('out_dtype', _OUTPUT_DTYPES, g('out_dtype', ''), '')}"
        f"</label>"
        f"<label>template {_select('template', ('norm', 'mdl'), g('template', 'norm'))}</label>"
        f"<br>{formats}<br>{checks}"
        f"<label>bias_dtype {_select('bias_dtype', _BIAS_DTYPES, g('bias_dtype', ''), '')}"
        f"</label>"
        "</fieldset><button type='submit' id='tune-button'>Tune</button></form>"
    )


def _hidden_problem(form: Mapping[str, str]) -> str:
    return "".join(
        f"<input type='hidden' name='{key}' value='{_e(form[key])}'>"
        for key in _PROBLEM_KEYS
        if form.get(key)
    )


def _tiling_form(
    form: Mapping[str, str], tiling: Mapping[str, Any], ref: Mapping[str, Any] | None
) -> str:
    """The editable tiling table; posting it re-evaluates the tiling for the same problem."""

    def row(name: str) -> str:
        value = tiling.get(name, "")
        return (
            f"<tr><th><label for='t-{name}'>{name}</label></th><td>"
            f"<input type='number' name='{name}' id='t-{name}' value='{_e(value)}'></td></tr>"
        )

    main = "".join(row(f) for f in MAIN_FIELDS)
    others = "".join(row(f) for f in EDITABLE_FIELDS if f not in MAIN_FIELDS)
    derived = "".join(
        f"<tr><th>{f}</th><td class='num' id='d-{f}'>{_e(tiling.get(f, ''))}</td></tr>"
        for f in (*PROBLEM_FIELDS, *DERIVED_FIELDS)
    )
    ref_field = f"<input type='hidden' name='ref' value='{_e(json.dumps(ref))}'>" if ref else ""
    return (
        "<form id='tiling-form' method='post' action='/explore/evaluate'>"
        f"{_hidden_problem(form)}{ref_field}"
        "<p class='note'>Change a field and re-evaluate; blank fields take their defaults. "
        "M, N, Ka, Kb, singleCoreK, isBias come from the problem and transLength, shareL1Size, "
        "shareL0CSize, shareUbSize are recomputed from the other fields.</p>"
        f"<table id='tiling-table'>{main}</table>"
        f"<details><summary>other fields</summary><table>{others}</table></details>"
        f"<details><summary>fields from the problem and derived sizes</summary>"
        f"<table id='derived-table'>{derived}</table></details>"
        "<button type='submit' id='evaluate-button'>Re-evaluate</button></form>"
    )


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, Mapping | list | tuple)


def _value_html(value: Any) -> str:
    """Renders an explanation (nested dicts and lists) compactly.

    A dict of scalars becomes a two-column table; a dict of such dicts (the buffers) one table
    with a column per inner key; anything else nests definition lists.
    """
    if isinstance(value, Mapping):
        if not value:
            return "<span class='note'>none</span>"
        if all(_is_scalar(v) for v in value.values()):
            rows = "".join(
                f"<tr><th>{_e(k)}</th><td>{_e(_fmt(v))}</td></tr>" for k, v in value.items()
            )
            return f"<table class='kv'>{rows}</table>"
        inner = list(value.values())
        if all(isinstance(v, Mapping) and all(_is_scalar(x) for x in v.values()) for v in inner):
            cols = list(dict.fromkeys(k for v in inner for k in v))
            head = "".join(f"<th>{_e(c)}</th>" for c in cols)
            rows = "".join(
                f"<tr><th>{_e(k)}</th>"
                + "".join(f"<td>{_e(_fmt(v.get(c, '')))}</td>" for c in cols)
                + "</tr>"
                for k, v in value.items()
            )
            return f"<table class='grid'><tr><th></th>{head}</tr>{rows}</table>"
        items = "".join(f"<dt>{_e(k)}</dt><dd>{_value_html(v)}</dd>" for k, v in value.items())
        return f"<dl>{items}</dl>"
    if isinstance(value, list | tuple):
        if not value:
            return "<span class='note'>none</span>"
        if all(_is_scalar(v) for v in value):
            return _e(", ".join(_fmt(v) for v in value))
        return "<ul>" + "".join(f"<li>{_value_html(v)}</li>" for v in value) + "</ul>"
    return _e(_fmt(value))


def _summary(estimate: Mapping[str, Any], ref: Mapping[str, Any] | None = None) -> str:
    time_us = float(estimate["time_us"])
    line = (
        f"<p class='summary' id='summary'>Predicted time <b id='time-us'>{time_us:.2f}</b> us, "
        f"<b id='tflops'>{float(estimate['tflops']):.1f}</b> TFLOPS, bottleneck pipe "
        f"<b id='bottleneck'>{_e(estimate['bottleneck'])}</b>"
        f" ({'simulated' if estimate.get('simulated') else 'estimator'}).</p>"
    )
    roof = estimate.get("roofline") or {}
    bounds = (
        f"<p class='note'>Bounds: sequential {float(estimate['sequential_bound_us']):.2f} us, "
        f"resource {float(estimate['resource_bound_us']):.2f} us, roofline "
        f"{float(roof.get('bound_us', float('nan'))):.2f} us ({_e(roof.get('limited_by', '?'))}"
        f"-bound); launch overhead {float(estimate.get('launch_overhead_us', 0.0)):.1f} us "
        f"included.</p>"
    )
    if ref:
        ratio = float(ref["time_us"]) / time_us if time_us > 0 else float("nan")
        line += (
            f"<p class='summary' id='versus'>{_e(ref.get('label', 'tuned'))}: "
            f"{float(ref['time_us']):.2f} us; this tiling is ×{ratio:.3f} its speed.</p>"
        )
    return line + bounds


def _pictures(
    problem: Problem,
    preset: HardwarePreset,
    tiling: TCubeTiling,
    points: list[dict[str, Any]],
    series: list[tuple[str, Mapping[str, Any]]],
    sim: SimResult | None = None,
) -> str:
    """The timeline (when the kernel is short enough to simulate quickly), roofline and pipes."""
    timeline = svg.timeline_svg_for(problem, tiling, preset, sim, id_prefix="ex-")
    if timeline is None:
        timeline = (
            "<p class='note'>This kernel is too long to simulate for a picture here; "
            "the figures above come from the estimator.</p>"
        )
    parts = [
        f"<section id='timeline-section'><h2>Pipeline timeline</h2>{timeline}</section>",
        "<section id='roofline-section'><h2>Roofline</h2>"
        f"{svg.roofline_svg(problem, preset, points, width=960, id_prefix='ex-')}</section>",
    ]
    if len(series) > 1:
        parts.append(
            "<section id='pipes-section'><h2>Per-pipe busy time</h2>"
            f"{svg.pipes_svg(series, width=960, id_prefix='ex-')}</section>"
        )
    return "<div class='pictures'>" + "".join(parts) + "</div>"


def _page(form: Mapping[str, str], body: str, error: str = "") -> str:
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<title>Ascend Matmul tiling explorer</title>"
        f"<style>{_CSS}</style></head><body>"
        "<h1>Ascend Matmul tiling explorer</h1>"
        "<p class='note'>Tune a Matmul's TCubeTiling, see where the pipes wait, and change a "
        "field to see what it does. The JSON API is at <a href='/docs'>/docs</a>.</p>"
        f"{_problem_form(form)}{error}{body}</body></html>"
    )


def _error_html(exc: Exception) -> str:
    if isinstance(exc, ProblemError):
        errors = exc.extensions.get("errors") or exc.extensions.get("violations") or []
        named = "".join(
            f"<li>{_e(e.get('field') or e.get('id'))}: {_e(e.get('message'))}</li>" for e in errors
        )
        message = _e(exc.detail) + (f"<ul class='note'>{named}</ul>" if named else "")
    elif isinstance(exc, InputError):
        details = f"field <code>{_e(exc.field)}</code> ({_e(exc.rule)})"
        if exc.value is not None:
            details += f", value <code>{_e(exc.value)}</code>"
        if exc.limit is not None:
            details += f", limit <code>{_e(exc.limit)}</code>"
        message = f"{_e(exc.message)}<br><span class='note'>{details}</span>"
    else:
        message = _e(str(exc))
    return f"<div class='error' id='error' role='alert'><b>Cannot do that:</b> {message}</div>"


def _violations_html(report: Mapping[str, Any]) -> str:
    items = "".join(
        f"<li data-rule='{_e(v['id'])}'><b>{_e(v['id'])}</b>: {_e(v['message'])} "
        f"(value {_e(v['value'])}, limit {_e(v['limit'])}; fields {_e(', '.join(v['fields']))})"
        f"</li>"
        for v in report.get("violations", [])
    )
    return (
        "<div class='error' id='error' role='alert'><b>This tiling is not legal:</b>"
        f"<ul id='violations'>{items}</ul></div>"
    )


# --------------------------------------------------------------------------------------------
# The two views
# --------------------------------------------------------------------------------------------


def render_answer(form: Mapping[str, str], answer: Mapping[str, Any]) -> str:
    """Renders the answer page of a tuned problem (runs in the search pool: it simulates).

    Args:
        form: The problem form's fields (query parameters).
        answer: The tuned answer, as ``POST /v1/tilings:tune`` returns it.

    Returns:
        The page's HTML.
    """
    problem_data = problem_from_form(form)
    problem = parse_problem(problem_data)
    preset = load_preset(problem.soc)
    tiling = parse_request({"problem": problem_data, "tiling": answer["tiling"]})[1]
    estimate: Mapping[str, Any] = answer["estimate"]
    baselines = [b for b in answer.get("baselines") or [] if isinstance(b, Mapping)]
    rows = "".join(
        f"<tr data-baseline='{_e(b.get('name'))}'><td>{_e(b.get('name'))}</td>"
        + (
            f"<td class='num'>{float(b['estimate']['time_us']):.2f}</td>"
            f"<td class='num'>×{float(b['speedup']):.3f}</td>"
            if b.get("estimate") and isinstance(b.get("speedup"), int | float)
            else "<td colspan='2'>not legal: "
            + _e(", ".join(v.get("id", "?") for v in b.get("violations", [])) or "no estimate")
            + "</td>"
        )
        + "</tr>"
        for b in baselines
    )
    baseline_table = (
        "<table id='baselines'><tr><th>baseline</th><th>time (us)</th>"
        f"<th>tuned speedup</th></tr>{rows}</table>"
        if rows
        else ""
    )
    baseline_table += _scope_note(answer)
    points = svg.roofline_points("tuned", "tuned", estimate, bounds=True)
    series: list[tuple[str, Mapping[str, Any]]] = [("tuned", estimate)]
    for b in baselines:
        name = str(b.get("name", "baseline"))
        points += svg.roofline_points(name, "baseline", b.get("estimate"))
        series.append((name, b.get("estimate") or {}))
    ref = {
        "label": "tuned",
        "time_us": float(estimate["time_us"]),
        "hbm_bytes": estimate.get("hbm_bytes"),
        "pipe_busy_us": estimate.get("pipe_busy_us", {}),
    }
    side = {
        key: answer[key] for key in ("certificate", "search") if isinstance(answer.get(key), dict)
    }
    body = (
        "<section id='result' data-view='tune'><h2>Tuned tiling</h2>"
        f"{_summary(estimate)}{baseline_table}"
        "<div class='columns'>"
        f"<div><h2>TCubeTiling</h2>{_tiling_form(form, answer['tiling'], ref)}</div>"
        f"<section id='explanation'><h2>Why this tiling</h2>"
        f"{_value_html(answer.get('explanation') or {})}</section></div>"
        f"{measure_form(problem.canonical(), answer['tiling'])}"
        f"{_pictures(problem, preset, tiling, points, series)}"
        f"<details id='search-details'><summary>certificate and search</summary>"
        f"{_value_html(side)}</details></section>"
    )
    return _page(form, body)


def _scope_note(answer: Mapping[str, Any]) -> str:
    """What the certificate covers, and any faster baseline outside it, under the baselines."""
    cert = answer.get("certificate")
    scope = cert.get("scope") if isinstance(cert, Mapping) else None
    out = ""
    if scope:
        out += (
            f"<p class='note' id='certificate-scope'>The search covers the tilings with "
            f"{_e(scope)}; any other dealt split (more tiles than cores) is legal but not "
            "searched.</p>"
        )
    explanation = answer.get("explanation")
    caveats = explanation.get("caveats") if isinstance(explanation, Mapping) else None
    for c in caveats or []:
        if isinstance(c, Mapping) and c.get("id") == "dealt_split_faster":
            out += f"<p class='note' id='dealt-split-faster'>{_e(c.get('message'))}</p>"
    return out


def render_evaluate(form: Mapping[str, str]) -> tuple[int, str]:
    """Checks and predicts the tiling posted from the tiling table, and renders it.

    Args:
        form: The hidden problem fields, the tiling fields and optionally ``ref`` (the tuned
            tiling's figures, for comparison).

    Returns:
        (HTTP status, HTML): 200 with the prediction and pictures; 422 when the input is bad or
        the tiling breaks a rule (each violation listed).
    """
    ref = _reference_from_form(form)
    tiling_values: Mapping[str, Any] = {k: form.get(k, "") for k in EDITABLE_FIELDS}
    try:
        problem_data = problem_from_form(form)
        problem, tiling, preset = parse_request(
            {"problem": problem_data, "tiling": tiling_from_form(form)}
        )
    except (InputError, UnknownSocError) as exc:
        body = f"<h2>TCubeTiling</h2>{_tiling_form(form, tiling_values, ref)}"
        return 422, _page(form, body, _error_html(exc))
    # One simulation serves the estimate and the timeline.
    sims: list[SimResult | None] = []

    def simulation() -> SimResult | None:
        sims.append(svg.simulate_for_timeline(problem, tiling, preset))
        return sims[-1]

    result = evaluate(problem, tiling, preset, simulation)
    values = tiling.model_dump()
    if not result["valid"]:
        body = (
            "<section id='result' data-view='evaluate'>"
            f"<h2>TCubeTiling</h2>{_tiling_form(form, values, ref)}</section>"
        )
        return 422, _page(form, body, _violations_html(result))
    estimate: Mapping[str, Any] = result["estimate"]
    points = svg.roofline_points("this tiling", "tiling", estimate, bounds=True)
    series: list[tuple[str, Mapping[str, Any]]] = [("this tiling", estimate)]
    if ref:
        label = str(ref.get("label", "tuned"))
        points += svg.roofline_points(label, "tuned", ref)
        series.append((label, ref))
    warnings = "".join(
        f"<li>{_e(w['id'])}: {_e(w['message'])}</li>" for w in result.get("warnings", [])
    )
    body = (
        "<section id='result' data-view='evaluate'><h2>Evaluated tiling</h2>"
        f"{_summary(estimate, ref)}"
        + (f"<ul id='warnings' class='note'>{warnings}</ul>" if warnings else "")
        + f"<h2>TCubeTiling</h2>{_tiling_form(form, values, ref)}"
        f"{_pictures(problem, preset, tiling, points, series, sims[0])}</section>"
    )
    return 200, _page(form, body)


class PageMemo:
    """Rendered answer pages by (cache key, form): a page is a pure function of the two.

    Rendering simulates the timeline (tens to hundreds of milliseconds); a repeat of a stored
    answer then costs a dictionary lookup. Used from the event loop thread only.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._pages: OrderedDict[tuple[str, tuple[tuple[str, str], ...]], str] = OrderedDict()

    def get(self, key: tuple[str, tuple[tuple[str, str], ...]]) -> str | None:
        page = self._pages.get(key)
        if page is not None:
            self._pages.move_to_end(key)
        return page

    def put(self, key: tuple[str, tuple[tuple[str, str], ...]], page: str) -> None:
        self._pages[key] = page
        if len(self._pages) > self.size:
            self._pages.popitem(last=False)


#: Cookie that carries the API token for the explorer's searches (set by ``/explore/token``).
TOKEN_COOKIE = "tiler_token"


def _tune_body(form: Mapping[str, str]) -> TuneBody:
    """The ``tilings:tune`` body of the form: the API's request, so the two share the cache.

    Raises:
        InputError: A field is missing or invalid (named as the API names it).
    """
    data = problem_from_form(form)
    try:
        return TuneBody.model_validate({"problem": data})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise InputError(field, first["type"], f"{field}: {first['msg']}", data.get(
            str(first["loc"][-1]))) from None  # fmt: skip


def _may_search(request: Request) -> bool:
    """True when the request may start a search: the service has no token, or it came along.

    A search is a write (it stores an answer and holds a pool slot), so with ``TILER_API_TOKEN``
    set it needs the token, as a cookie (``/explore/token`` sets it) or the API's header.
    """
    token = request.app.state.settings.token
    if token is None:
        return True
    cookie = request.cookies.get(TOKEN_COOKIE, "").encode()
    header = request.headers.get("authorization", "").encode()
    return hmac.compare_digest(cookie, token.encode()) or bearer_token_matches(
        header, token.encode()
    )


def _token_form(request: Request) -> str:
    target = request.url.path + ("?" + request.url.query if request.url.query else "")
    return (
        "<form id='token-form' method='post' action='/explore/token'>"
        f"<input type='hidden' name='next' value='{_e(target)}'>"
        "<label>API token <input type='password' name='token' id='f-token' required></label>"
        "<button type='submit' id='token-button'>Search with the token</button></form>"
    )


@router.get("/explore", include_in_schema=False, response_class=HTMLResponse)
async def explore(request: Request) -> HTMLResponse:
    """The explorer page: the problem form, and the tuned answer once the form is submitted.

    The answer comes the way ``POST /v1/tilings:tune`` gets it: from the cache, or from one
    search in the bounded pool that identical requests (from the page or the API) join.
    """
    form = dict(request.query_params)
    if not any(form.get(key) for key in _INT_PROBLEM_KEYS):
        return HTMLResponse(_page(form, ""))
    service: TuningService = request.app.state.service
    try:
        prepared = service.prepare(_tune_body(form))
        stored = await service.lookup(prepared)
        if stored is None:
            if not _may_search(request):
                error = (
                    "<div class='error' id='error' role='alert'><b>Not searched yet:</b> no "
                    "stored answer for this problem, and this server needs its API token "
                    f"(TILER_API_TOKEN) to start a search.{_token_form(request)}</div>"
                )
                return HTMLResponse(_page(form, "", error), status_code=401)
            stored = await service.search(prepared)
    except (InputError, UnknownSocError, ProblemError) as exc:
        return HTMLResponse(_page(form, "", _error_html(exc)), status_code=422)
    memo: PageMemo = request.app.state.explore_pages
    key = (prepared.cache_key, tuple(sorted(form.items())))
    page = memo.get(key)
    if page is None:
        answer = stored.model_dump(mode="json", exclude_unset=True)
        page = await service.pool.call(render_answer, form, answer)
        memo.put(key, page)
    return HTMLResponse(page)


@router.post("/explore/token", include_in_schema=False, response_class=HTMLResponse)
async def explore_token(request: Request) -> Response:
    """Keeps the API token in a cookie for the explorer's searches, then goes back to the page.

    The token travels in a form post, never in a URL (which logs and browser history keep).
    """
    body = (await request.body()).decode("utf-8", errors="replace")
    form = dict(parse_qsl(body, keep_blank_values=True))
    target = form.get("next", "/explore")
    if not target.startswith("/explore"):
        target = "/explore"  # never a redirect off the page
    token = request.app.state.settings.token
    given = form.get("token", "").encode()
    if token is None or not hmac.compare_digest(given, token.encode()):
        error = "<div class='error' id='error' role='alert'><b>Wrong API token.</b></div>"
        return HTMLResponse(_page({}, "", error), status_code=401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict", path="/explore")
    return response


@router.post("/explore/evaluate", include_in_schema=False, response_class=HTMLResponse)
async def explore_evaluate(request: Request) -> HTMLResponse:
    """Re-evaluates the tiling posted from the explorer's tiling table."""
    # Parsed by hand: the url-encoded body of a plain HTML form needs no multipart library.
    body = (await request.body()).decode("utf-8", errors="replace")
    form = dict(parse_qsl(body, keep_blank_values=True))
    # In the bounded search pool: an evaluation simulates the kernel for its timeline.
    service: TuningService = request.app.state.service
    status, page = await service.pool.call(render_evaluate, form)
    return HTMLResponse(page, status_code=status)
