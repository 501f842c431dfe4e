"""The roofline picture: the compute and HBM roofs with tilings and bounds as labelled points.

:func:`roofline_points` turns an estimate into points; :func:`roofline_svg` draws them under the
roofs of :mod:`simcore.estimate.roofline` (``<g class="point" data-role="tuned">`` per point).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from app.views.svg_parts import (
    ROLE_COLOURS,
    attr,
    data,
    num,
    svg_open,
    text,
)
from simcore.estimate.roofline import roofline
from simcore.hardware.presets import HardwarePreset
from simcore.tiling.problem import Problem

__all__ = ["roofline_points", "roofline_svg"]


# --------------------------------------------------------------------------------------------
# Roofline
# --------------------------------------------------------------------------------------------


def roofline_points(
    label: str, role: str, estimate: Mapping[str, Any] | None, *, bounds: bool = False
) -> list[dict[str, Any]]:
    """Turns an ``estimate`` (as :func:`simcore.evaluate.estimate_dict` returns it) into points.

    Args:
        label: Name of the tiling (``tuned``, ``seed 002 recommended``, ...).
        role: ``tuned``, ``baseline`` or ``tiling`` (sets the marker colour).
        estimate: The estimate; None (an illegal baseline) gives no point.
        bounds: Also add the tiling's resource and sequential bounds and the roofline bound.

    Returns:
        Points for :func:`roofline_svg`.
    """
    if not estimate:
        return []
    hbm = estimate.get("hbm_bytes")
    points: list[dict[str, Any]] = [
        {"label": label, "role": role, "time_us": float(estimate["time_us"]), "hbm_bytes": hbm}
    ]
    if bounds:
        roof = estimate.get("roofline") or {}
        if "resource_bound_us" in estimate:
            points.append(
                {
                    "label": f"resource bound ({label})",
                    "role": "bound",
                    "time_us": float(estimate["resource_bound_us"]),
                    "hbm_bytes": hbm,
                }
            )
        if "sequential_bound_us" in estimate:
            points.append(
                {
                    "label": f"sequential bound ({label})",
                    "role": "bound",
                    "time_us": float(estimate["sequential_bound_us"]),
                    "hbm_bytes": hbm,
                }
            )
        if "bound_us" in roof:
            points.append(
                {
                    "label": "roofline bound (with launch)",
                    "role": "bound",
                    "time_us": float(roof["bound_us"]),
                }
            )
    return points


def roofline_svg(
    problem: Problem,
    preset: HardwarePreset,
    points: Sequence[Mapping[str, Any]],
    *,
    width: float = 800.0,
    height: float = 400.0,
    id_prefix: str = "",
) -> str:
    """Draws the roofline of ``problem`` on ``preset`` with tilings and bounds as points.

    The axes are logarithmic: arithmetic intensity in FLOP per HBM byte against TFLOPS. The roof
    is the chip's cube peak for the problem's dtype and the HBM slope
    (:mod:`simcore.estimate.roofline`); a dashed line marks the problem's own intensity (A and B
    read once, C written once).

    Args:
        problem: The Matmul.
        preset: The chip.
        points: Dicts with ``label``, ``time_us`` and ``role`` (``tuned``, ``baseline``,
            ``bound`` or ``tiling``), optionally ``hbm_bytes`` (the tiling's HBM traffic; the
            problem's minimum when absent). A point's height is ``2·M·N·K / time``.
        width: Width of the picture in pixels.
        height: Height of the picture in pixels.
        id_prefix: Prefix of element ids.

    Returns:
        The SVG document.
    """
    roof = roofline(problem, preset)
    flops = float(problem.flops)
    problem_ai = roof.arithmetic_intensity_flops_per_byte
    peak = roof.peak_tflops
    hbm_tb_s = roof.hbm_gbps / 1000.0
    ridge_ai = peak / hbm_tb_s

    drawn: list[tuple[float, float, str, str]] = []  # (ai, tflops, label, role)
    for p in points:
        time_us = float(p["time_us"])
        if not (time_us > 0 and math.isfinite(time_us)):
            continue
        hbm = p.get("hbm_bytes")
        ai = flops / float(hbm) if hbm else problem_ai
        drawn.append((ai, flops / time_us / 1e6, str(p.get("label", "")), str(p.get("role", ""))))

    xs = [problem_ai, ridge_ai] + [d[0] for d in drawn]
    ys = [peak] + [d[1] for d in drawn]
    x_lo = 10 ** math.floor(math.log10(min(xs) / 3))
    x_hi = 10 ** math.ceil(math.log10(max(xs) * 3))
    y_lo = 10 ** math.floor(math.log10(max(min(ys) / 2, 1e-6)))
    y_hi = 10 ** math.ceil(math.log10(peak * 1.2))

    left, right, top, bottom = 64.0, 250.0, 34.0, 46.0
    pw, ph = width - left - right, height - top - bottom

    def px(ai: float) -> float:
        return left + (math.log10(ai) - math.log10(x_lo)) / math.log10(x_hi / x_lo) * pw

    def py(tflops: float) -> float:
        return top + ph - (math.log10(tflops) - math.log10(y_lo)) / math.log10(y_hi / y_lo) * ph

    caption = f"Roofline: {problem.m}×{problem.n}×{problem.k} {problem.dtype.value} on {preset.soc}"
    out = [svg_open(width, height, "roofline", caption, id_prefix)]
    out.append(
        f"<text class='caption' x='8' y='16' font-size='12' font-weight='bold'>"
        f"{text(caption)}</text>"
    )
    out.append(
        f"<rect class='plot-area' x='{num(left)}' y='{num(top)}' width='{num(pw)}' "
        f"height='{num(ph)}' fill='#fafafa' stroke='#999'/>"
    )
    # Decade grid and tick labels.
    out.append("<g class='axis' data-axis='x' data-unit='FLOP/byte'>")
    d = math.log10(x_lo)
    while d <= math.log10(x_hi) + 1e-9:
        gx = px(10**d)
        out.append(
            f"<line x1='{num(gx)}' x2='{num(gx)}' y1='{num(top)}' y2='{num(top + ph)}' "
            f"stroke='#ddd'/><text x='{num(gx)}' y='{num(top + ph + 14)}' "
            f"text-anchor='middle'>{text(f'{10**d:g}')}</text>"
        )
        d += 1
    out.append(
        f"<text x='{num(left + pw / 2)}' y='{num(height - 10)}' text-anchor='middle'>"
        f"arithmetic intensity (FLOP per HBM byte)</text></g>"
    )
    out.append("<g class='axis' data-axis='y' data-unit='TFLOPS'>")
    d = math.log10(y_lo)
    while d <= math.log10(y_hi) + 1e-9:
        gy = py(10**d)
        out.append(
            f"<line x1='{num(left)}' x2='{num(left + pw)}' y1='{num(gy)}' y2='{num(gy)}' "
            f"stroke='#ddd'/><text x='{num(left - 4)}' y='{num(gy + 4)}' "
            f"text-anchor='end'>{text(f'{10**d:g}')}</text>"
        )
        d += 1
    out.append(
        f"<text x='14' y='{num(top + ph / 2)}' text-anchor='middle' "
        f"transform='rotate(-90 14 {num(top + ph / 2)})'>TFLOPS</text></g>"
    )

    # The roof: HBM slope up to the ridge, then the cube peak.
    x_start = max(x_lo, y_lo / hbm_tb_s)
    roof_pts = [(x_start, x_start * hbm_tb_s), (ridge_ai, peak), (x_hi, peak)]
    poly = " ".join(f"{num(px(a))},{num(py(t))}" for a, t in roof_pts)
    out.append(
        f"<g class='roof'><polyline points='{poly}' fill='none' stroke='#222' "
        f"stroke-width='2'/>"
        f"<text x='{num(px(ridge_ai) - 6)}' y='{num(py(peak) - 5)}' text-anchor='end'>"
        f"{text(f'cube peak {peak:.1f} TFLOPS ({problem.dtype.value})')}</text>"
        f"<text x='{num(px(x_start) + 10)}' y='{num(py(x_start * hbm_tb_s) - 10)}'>"
        f"{text(f'HBM {roof.hbm_gbps:.0f} GB/s')}</text></g>"
    )
    ax = px(problem_ai)
    out.append(
        f"<g class='problem-intensity' data-ai='{data(problem_ai)}'>"
        f"<line x1='{num(ax)}' x2='{num(ax)}' y1='{num(top)}' y2='{num(top + ph)}' "
        f"stroke='#888' stroke-dasharray='5 4'/>"
        f"<text x='{num(ax + 3)}' y='{num(top + ph - 6)}' fill='#555' font-size='9'>"
        f"{text(f'this problem: {problem_ai:.4g} FLOP/B ({roof.limited_by}-bound)')}"
        f"</text></g>"
    )

    # Points, labelled on the right margin in height order, pushed apart so labels never overlap.
    order = sorted(range(len(drawn)), key=lambda i: py(drawn[i][1]))
    label_y: dict[int, float] = {}
    last = top - 20.0
    for i in order:
        yy = max(py(drawn[i][1]), last + 13.0)
        label_y[i] = yy
        last = yy
    overflow = last - (height - 8)
    if overflow > 0:
        label_y = {i: y - overflow for i, y in label_y.items()}
    lx = left + pw + 14
    for i, (ai, tflops, label, role) in enumerate(drawn):
        colour = ROLE_COLOURS.get(role, "#333333")
        cx, cy = px(ai), py(tflops)
        marker = (
            f"<rect x='{num(cx - 4)}' y='{num(cy - 4)}' width='8' height='8' "
            f"fill='none' stroke='{colour}' stroke-width='1.5'/>"
            if role == "bound"
            else f"<circle cx='{num(cx)}' cy='{num(cy)}' r='5' fill='{colour}'/>"
        )
        out.append(
            f"<g class='point' data-role={attr(role)} data-label={attr(label)} "
            f"data-tflops='{data(tflops)}'>{marker}"
            f"<line x1='{num(cx + 5)}' y1='{num(cy)}' x2='{num(lx - 2)}' "
            f"y2='{num(label_y[i] - 3)}' stroke='{colour}' stroke-width='0.5'/>"
            f"<text x='{num(lx)}' y='{num(label_y[i])}' fill='{colour}' font-size='10'>"
            f"{text(f'{label}: {tflops:.4g} TFLOPS')}</text></g>"
        )
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Per-pipe comparison
# --------------------------------------------------------------------------------------------
