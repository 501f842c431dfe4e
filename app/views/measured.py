"""The explorer's measurement pages: a measured time for the tiling shown, measured vs predicted.

The chart is of a SoC's measurements, with its active calibration profile marked.

* :func:`measure_form` - the form under a tiling of ``/explore``: the problem and tiling ride
  along as hidden fields, the user types the measured device time (and where it was measured);
* ``POST /explore/measure`` - stores it as ``POST /v1/measurements`` does (checked, predicted)
  and shows the prediction beside it;
* ``GET /explore/measurements?soc=X`` - measured (x) against predicted (y), log-log, with the
  diagonal: the default model's predictions, and the active profile's when one is active.

Like the rest of the explorer: plain forms, no script. When the server has an API token, the
form asks for it (the store is a write; the explorer's pages are otherwise open).
"""

from __future__ import annotations

import hmac
import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode

import anyio.to_thread
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import ValidationError

from app.api.middleware import bearer_token_matches
from app.api.replay import answers_changed
from app.db import feedback_repository as frepo
from app.feedback.measurements import MeasurementIn, prepare_batch
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from tiler.calibrate import profile_preset
from tiler.measured import at_clock, compare, kernel_estimate

router = APIRouter()

#: Points drawn at most (the newest measurements).
MAX_POINTS = 200
_W, _H, _PAD = 560.0, 420.0, 56.0
_CSS = (
    "body{font-family:system-ui,sans-serif;margin:1.2rem 2rem;color:#222;max-width:1100px}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}"
    ".note{color:#555}.error{color:#a00}"
)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def measure_form(problem: Mapping[str, Any], tiling: Mapping[str, Any]) -> str:
    """The form to enter a measured time for a tiling of ``/explore``.

    Args:
        problem: The canonical problem.
        tiling: The tiling shown (its struct fields).
    """
    hidden = (
        f"<input type='hidden' name='problem' value='{_e(json.dumps(dict(problem)))}'>"
        f"<input type='hidden' name='tiling' value='{_e(json.dumps(dict(tiling)))}'>"
    )
    # Asked always (the page does not know the server's settings); ignored without a token.
    token_field = (
        "<label>API token (if the server has one) "
        "<input type='password' name='token' id='m-token'></label>"
    )
    soc = _e(problem.get("soc", ""))
    return (
        "<form id='measure-form' method='post' action='/explore/measure'>"
        f"<h2>Measured on a board?</h2>{hidden}"
        "<label>device time (us) <input type='text' name='device_time_us' id='m-time' "
        "required></label>"
        "<label>CANN version <input type='text' name='cann_version' id='m-cann'></label>"
        "<label>clock (MHz) <input type='text' name='clock_mhz' id='m-clock'></label>"
        f"{token_field}<button type='submit' id='measure-button'>Store measurement</button>"
        f"<p class='note'>Stored with the model's prediction beside it; the fastest measured "
        f"kernel of this exact problem becomes its tune answer. "
        f"<a href='/explore/measurements?soc={soc}'>measured against predicted on {soc}</a></p>"
        "</form>"
    )


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><p><a href='/explore'>explorer</a></p>{body}</body></html>"
    )


def _authorized(request: Request, form: Mapping[str, str]) -> bool:
    """True when the request may store: no ``TILER_API_TOKEN``, or the token came along.

    Storing is a write: the token may be in the form, in the explorer's token cookie or in the
    API's ``Authorization`` header.
    """
    # Imported here: the explorer's module imports this one for its form.
    from app.views.explore import TOKEN_COOKIE

    token = request.app.state.settings.token
    if token is None:
        return True
    secret = token.encode()
    given = (form.get("token", "").encode(), request.cookies.get(TOKEN_COOKIE, "").encode())
    header = request.headers.get("authorization", "").encode()
    return any(hmac.compare_digest(g, secret) for g in given) or bearer_token_matches(
        header, secret
    )


def _measurement_from_form(form: Mapping[str, str]) -> MeasurementIn:
    device: dict[str, Any] = {}
    if form.get("cann_version"):
        device["cann_version"] = form["cann_version"]
    if form.get("clock_mhz"):
        device["clock_mhz"] = form["clock_mhz"]
    return MeasurementIn.model_validate(
        {
            "problem": json.loads(form.get("problem") or "{}"),
            "tiling": json.loads(form.get("tiling") or "{}"),
            "measured": {"device_time_us": form.get("device_time_us") or None},
            "device": device or None,
            "note": "explorer",
        }
    )


@router.post("/explore/measure", include_in_schema=False, response_class=HTMLResponse)
async def explore_measure(request: Request) -> HTMLResponse:
    """Stores the measured time posted from the explorer's form."""
    body = (await request.body()).decode("utf-8", errors="replace")
    form = dict(parse_qsl(body, keep_blank_values=True))
    if not _authorized(request, form):
        page = _page("Measurement not stored", "<p class='error'>The API token is wrong.</p>")
        return HTMLResponse(page, status_code=401)
    try:
        item = _measurement_from_form(form)
    except (ValidationError, ValueError) as exc:
        message = str(exc).splitlines()
        detail = "; ".join(message[:3])
        page = _page("Measurement not stored", f"<p class='error' id='error'>{_e(detail)}</p>")
        return HTMLResponse(page, status_code=422)
    service = request.app.state.service
    kind, data = await service.pool.call(prepare_batch, [(item, "explorer", None)])
    if kind != "ok":
        detail = json.dumps(data[2])
        page = _page("Measurement not stored", f"<p class='error' id='error'>{_e(detail)}</p>")
        return HTMLResponse(page, status_code=422)
    rows, predictions = data
    await anyio.to_thread.run_sync(frepo.insert_measurements, service.db, rows)
    # A replayed tune answer of this problem would now be stale (app.api.replay).
    answers_changed(request)
    p = predictions[0]
    warning = f"<p class='error'>{_e(p['warning'])}</p>" if "warning" in p else ""
    soc = _e(rows[0]["soc"])
    result = (
        f"<table id='measure-result'><tr><th>id</th><td>{_e(rows[0]['id'])}</td></tr>"
        f"<tr><th>measured ({_e(p['kind'])})</th><td>{p['measured_us']:.3f} us</td></tr>"
        f"<tr><th>predicted</th><td>{p['predicted_us']:.3f} us</td></tr>"
        f"<tr><th>error</th><td>{100 * p['error']:+.1f} %</td></tr></table>{warning}"
        f"<p><a href='/explore/measurements?soc={soc}'>measured against predicted on "
        f"{soc}</a></p>"
    )
    return HTMLResponse(_page("Measurement stored", result), status_code=201)


def chart_points(
    rows: Sequence[frepo.MeasurementRow], constants: Mapping[str, float] | None
) -> list[dict[str, Any]]:
    """Each measurement with the default model's prediction and the profile's (in a worker)."""
    out = []
    for row in rows:
        problem = Problem.model_validate(row.problem)
        tiling = TCubeTiling.model_validate(row.tiling)
        clock = row.device["clock_mhz"]
        chip = at_clock(load_preset(problem.soc), clock)
        default = compare(kernel_estimate(problem, tiling, chip), row.measured)
        point = {"id": row.id, "measured_us": default["measured_us"],
                 "default_us": default["predicted_us"], "profile_us": None}  # fmt: skip
        if constants:
            preset = at_clock(profile_preset(problem.soc, constants), clock)
            point["profile_us"] = compare(kernel_estimate(problem, tiling, preset), row.measured)[
                "predicted_us"
            ]
        out.append(point)
    return out


def scatter_svg(points: Sequence[Mapping[str, Any]], profile_label: str | None) -> str:
    """Measured (x) against predicted (y), log-log, with the diagonal and both series."""
    values = [p["measured_us"] for p in points] + [p["default_us"] for p in points]
    values += [p["profile_us"] for p in points if p["profile_us"] is not None]
    values = [v for v in values if v > 0]
    lo = math.floor(math.log10(min(values))) if values else 0
    hi = math.ceil(math.log10(max(values))) if values else 1
    hi = max(hi, lo + 1)

    def pos(value: float, horizontal: bool) -> float:
        frac = (math.log10(max(value, 10.0**lo)) - lo) / (hi - lo)
        if horizontal:
            return _PAD + frac * (_W - 2 * _PAD)
        return _H - _PAD - frac * (_H - 2 * _PAD)

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' id='measured-chart' width='{_W:.0f}' "
        f"height='{_H:.0f}' role='img' aria-label='measured against predicted'>",
        f"<line x1='{pos(10.0**lo, True):.1f}' y1='{pos(10.0**lo, False):.1f}' "
        f"x2='{pos(10.0**hi, True):.1f}' y2='{pos(10.0**hi, False):.1f}' stroke='#999' "
        "stroke-dasharray='4 3'/>",
    ]
    for exp in range(lo, hi + 1):
        x, y = pos(10.0**exp, True), pos(10.0**exp, False)
        parts.append(f"<text x='{x:.1f}' y='{_H - _PAD + 16:.1f}' font-size='11' "
                     f"text-anchor='middle'>1e{exp}</text>")  # fmt: skip
        parts.append(f"<text x='{_PAD - 6:.1f}' y='{y + 4:.1f}' font-size='11' "
                     f"text-anchor='end'>1e{exp}</text>")  # fmt: skip
    parts.append(f"<text x='{_W / 2:.0f}' y='{_H - 12:.0f}' font-size='12' "
                 "text-anchor='middle'>measured (us)</text>")  # fmt: skip
    parts.append(f"<text x='14' y='{_H / 2:.0f}' font-size='12' text-anchor='middle' "
                 f"transform='rotate(-90 14 {_H / 2:.0f})'>predicted (us)</text>")  # fmt: skip
    for p in points:
        x = pos(p["measured_us"], True)
        parts.append(
            f"<circle class='default' data-id='{_e(p['id'])}' cx='{x:.1f}' "
            f"cy='{pos(p['default_us'], False):.1f}' r='4' fill='#4477aa'>"
            f"<title>{_e(p['id'])}: measured {p['measured_us']:.4g} us, default model "
            f"{p['default_us']:.4g} us</title></circle>"
        )
        if p["profile_us"] is not None:
            y = pos(p["profile_us"], False)
            parts.append(
                f"<rect class='profile' data-id='{_e(p['id'])}' x='{x - 4:.1f}' "
                f"y='{y - 4:.1f}' width='8' height='8' fill='#cc6677'>"
                f"<title>{_e(p['id'])}: active profile {p['profile_us']:.4g} us</title></rect>"
            )
    legend = "default model (circles)"
    if profile_label:
        legend += f"; active profile {profile_label} (squares)"
    parts.append(f"<text x='{_PAD}' y='18' font-size='12' id='chart-legend'>{_e(legend)}</text>")
    parts.append("</svg>")
    return "".join(parts)


@router.get("/explore/measurements", include_in_schema=False, response_class=HTMLResponse)
async def explore_measurements(request: Request) -> HTMLResponse:
    """Measured against predicted times of a SoC, with the active profile marked."""
    soc = request.query_params.get("soc", "")
    service = request.app.state.service
    form = (
        "<form method='get' action='/explore/measurements'><label>SoC <input type='text' "
        f"name='soc' value='{_e(soc)}'></label><button type='submit'>Show</button></form>"
    )
    if not soc:
        return HTMLResponse(_page("Measured against predicted", form))
    where = frepo.MeasurementFilter(soc=soc)
    rows, _next = await anyio.to_thread.run_sync(
        lambda: frepo.list_measurements(service.db, where, before_seq=None, limit=MAX_POINTS)
    )
    active = await anyio.to_thread.run_sync(frepo.active_id, service.db, soc)
    cal = None
    if active is not None:
        cal = await anyio.to_thread.run_sync(frepo.get_calibration, service.db, active)
    constants = (cal or {}).get("profile", {}) or {}
    constants = constants.get("constants") or None
    points = await service.pool.call(chart_points, rows, constants)
    label = None if cal is None else f"{cal['id']} (digest {str(cal['digest'])[:12]})"
    status = (
        f"<p id='active-profile'>Active profile: {_e(label)}</p>"
        if label
        else "<p id='active-profile'>Active profile: none (the default model)</p>"
    )
    listing = "".join(
        f"<tr><td>{_e(p['id'])}</td><td>{p['measured_us']:.4g}</td><td>{p['default_us']:.4g}</td>"
        f"<td>{'' if p['profile_us'] is None else format(p['profile_us'], '.4g')}</td></tr>"
        for p in points
    )
    table = (
        "<table id='measured-table'><tr><th>id</th><th>measured (us)</th>"
        f"<th>default model (us)</th><th>active profile (us)</th></tr>{listing}</table>"
    )
    body = (
        f"{form}{status}<p class='note'>{len(points)} measurements of {_e(soc)} (newest "
        f"{MAX_POINTS} at most); the diagonal is a perfect prediction. "
        f"<a href='/v1/measurements?{urlencode({'soc': soc})}'>JSON</a></p>"
        f"{scatter_svg(points, label) if points else ''}{table}"
    )
    return HTMLResponse(_page(f"Measured against predicted: {soc}", body))
