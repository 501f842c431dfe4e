"""SVG pictures of a tiling: the pipeline timeline, the roofline and the per-pipe comparison.

Pure functions from model results to SVG text (no web framework), shared by the explorer page,
the ``/v1/tilings/{id}/timeline.svg`` route and ``tiler tune --svg``:

* :func:`timeline_svg`: a Gantt chart of the slowest core's simulated pipes, one lane per queue
  the chip uses, bars coloured by instruction kind; long kernels show their first iterations and a
  steady-state window, with the omitted spans labelled.
* :func:`roofline_svg`: the compute and HBM roofs of :mod:`simcore.estimate.roofline` with tilings
  and bounds as labelled points.
* :func:`pipes_svg`: per-pipe busy time of the tuned tiling against its baselines.
* :func:`answer_svg`: the three together for a ``tiler.tune.tune`` answer.

Every picture is a standalone, well-formed SVG document (``xml.etree`` parses it) with stable
classes and ``data-*`` attributes so that tests and scripts can read it back:
``<g class="lane" data-pipe="MTE2">`` per lane, ``<rect class="bar" data-kind="mmad">`` per
instruction, ``<g class="point" data-role="tuned">`` per roofline point,
``<rect class="pipe-bar" data-pipe="M" data-series="tuned">`` per comparison bar.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from simcore.estimate.roofline import roofline
from simcore.evaluate import instruction_count
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.simulator import KINDS, PIPES, SimResult, simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling

__all__ = [
    "KIND_COLOURS",
    "KIND_LABELS",
    "MAX_TIMELINE_INSTRUCTIONS",
    "answer_svg",
    "pipes_svg",
    "roofline_points",
    "roofline_svg",
    "timeline_svg",
    "timeline_svg_for",
]

#: Fill colour of each instruction kind: one hue family per pipe so lanes read at a glance.
KIND_COLOURS: Mapping[str, str] = {
    "load_a": "#1f77b4",
    "load_b": "#17becf",
    "load_bias": "#9edae5",
    "nd2nz_a": "#8c564b",
    "nd2nz_b": "#c49c94",
    "ub_to_l1_a": "#bcbd22",
    "ub_to_l1_b": "#dbdb8d",
    "l0a": "#2ca02c",
    "l0b": "#98df8a",
    "mmad": "#d62728",
    "fixpipe": "#9467bd",
    "l0c_to_ub": "#e377c2",
    "ub_to_gm": "#f7b6d2",
}

#: Legend text of each instruction kind.
KIND_LABELS: Mapping[str, str] = {
    "load_a": "GM→L1 A",
    "load_b": "GM→L1 B",
    "load_bias": "GM→L1 bias",
    "nd2nz_a": "ND→NZ A (vector)",
    "nd2nz_b": "ND→NZ B (vector)",
    "ub_to_l1_a": "UB→L1 A",
    "ub_to_l1_b": "UB→L1 B",
    "l0a": "L1→L0A",
    "l0b": "L1→L0B",
    "mmad": "MMAD",
    "fixpipe": "FixPipe L0C→GM",
    "l0c_to_ub": "L0C→UB",
    "ub_to_gm": "UB→GM",
}

#: Kernels estimated above this many instructions per core get no timeline in :func:`answer_svg`
#: (simulating them would take seconds and the picture would be mostly omission anyway).
MAX_TIMELINE_INSTRUCTIONS = 400_000

_FONT = "font-family='DejaVu Sans, Arial, sans-serif' font-size='11'"
_SERIES_COLOURS = ("#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#7f7f7f")
_ROLE_COLOURS = {"tuned": "#d62728", "baseline": "#1f77b4", "bound": "#555555", "tiling": "#ff7f0e"}


def _num(x: float) -> str:
    """Coordinates with two decimals: enough for a screen, small files."""
    return f"{x:.2f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def _data(x: float) -> str:
    """Values in data-* attributes: 6 significant figures, for scripts reading them back."""
    return f"{x:.6g}"


def _text(s: object) -> str:
    return escape(str(s))


def _attr(s: object) -> str:
    return quoteattr(str(s))


def _fmt_us(time_us: float) -> str:
    """A duration for labels: 3 significant figures, in us (ms above 10 000 us)."""
    if time_us >= 10_000:
        return f"{time_us / 1000:.4g} ms"
    return f"{time_us:.4g} us"


def _nice_step(span: float, target_ticks: int) -> float:
    """A 1/2/5 x 10^n tick step giving about ``target_ticks`` ticks over ``span``."""
    if span <= 0:
        return 1.0
    raw = span / max(target_ticks, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if raw <= mult * mag:
            return mult * mag
    return 10 * mag


def _svg_open(width: float, height: float, css_class: str, title: str, id_prefix: str) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' class={_attr(css_class)} "
        f"id={_attr(id_prefix + css_class)} width='{_num(width)}' height='{_num(height)}' "
        f"viewBox='0 0 {_num(width)} {_num(height)}' role='img' {_FONT}>"
        f"<title>{_text(title)}</title>"
        f"<rect class='background' width='100%' height='100%' fill='#ffffff'/>"
    )


# --------------------------------------------------------------------------------------------
# Timeline
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Window:
    """A span of the core's schedule drawn at one scale: [start_us, end_us] at x0..x0+width."""

    start_us: float
    end_us: float
    x0: float
    width: float

    def x(self, time_us: float) -> float:
        span = self.end_us - self.start_us
        return self.x0 + (time_us - self.start_us) / span * self.width if span > 0 else self.x0


def _windows(start_us: np.ndarray, end_us: np.ndarray, max_bars: int) -> list[tuple[float, float]]:
    """The time spans to draw: everything, or the first iterations plus a steady-state window.

    The head holds the first ``max_bars // 2`` instructions to start; the steady-state window the
    same number of instructions around the middle of the schedule (by start order), where the
    pipeline has filled and before it drains, so it shows the repeating pattern.
    """
    n = len(start_us)
    makespan = float(end_us.max()) if n else 0.0
    if n <= max_bars:
        return [(0.0, makespan)]
    order = np.sort(start_us)
    head = max(max_bars // 2, 1)
    steady = max(max_bars - head, 1)
    s0 = max(head, n // 2 - steady // 2)
    s1 = min(n - 1, s0 + steady)
    head_end = float(order[head])
    steady_start = float(order[s0])
    steady_end = float(order[s1])
    if steady_start <= head_end:
        # Many instructions start at the same cycle: no gap to cut, draw the whole schedule.
        return [(0.0, makespan)]
    return [(0.0, head_end), (steady_start, steady_end)]


@dataclass(frozen=True)
class _Omission:
    """A span of the schedule left out of the picture."""

    from_us: float
    to_us: float
    instructions: int
    x: float
    anchor: str
    is_tail: bool

    @property
    def short(self) -> str:
        span = _fmt_us(self.to_us - self.from_us)
        return f"+{span} to the end ⋯" if self.is_tail else f"⋯ {span} ⋯"

    @property
    def description(self) -> str:
        where = "the last" if self.is_tail else "between the first iterations and the steady state"
        span = _fmt_us(self.to_us - self.from_us)
        return f"{where} {span} ({self.instructions} instructions)"


def _omissions(
    windows: Sequence[_Window],
    start_us: np.ndarray,
    end_us: np.ndarray,
    makespan_us: float,
    gap_w: float,
) -> list[_Omission]:
    """The spans between the drawn windows and after the last one, with what they hold."""
    if len(windows) < 2:
        return []
    spans: list[tuple[float, float, float, str, bool]] = [
        (left.end_us, right.start_us, left.x0 + left.width + gap_w / 2, "middle", False)
        for left, right in itertools.pairwise(windows)
    ]
    last = windows[-1]
    if last.end_us < makespan_us:
        spans.append((last.end_us, makespan_us, last.x0 + last.width, "end", True))
    out = []
    for t0, t1, x, anchor, is_tail in spans:
        # Only instructions wholly inside the span: those straddling its edges are drawn, clipped.
        count = int(np.count_nonzero((start_us >= t0) & (end_us <= t1)))
        out.append(_Omission(t0, t1, count, x, anchor, is_tail))
    return out


def timeline_svg(
    result: SimResult,
    preset: HardwarePreset,
    *,
    max_bars: int = 1500,
    width: float = 960.0,
    title: str | None = None,
    id_prefix: str = "",
) -> str:
    """Draws the slowest core's simulated pipelines as a Gantt chart.

    One lane per pipe the kernel uses (MTE2, MTE1, M, FIX, or V and MTE3 on chips that drain L0C
    through UB), in pipe order. Each instruction is a bar coloured by its kind; the lane's grey
    background shows through where the pipe idles. The busiest lane (the bottleneck) is outlined
    and says so. The time axis is in microseconds from the core's start (the kernel launch
    overhead, which precedes it, is stated in the caption, not drawn).

    When the core ran more than ``max_bars`` instructions, only the first iterations and a
    steady-state window from the middle of the schedule are drawn; the spans left out are marked
    with a break and labelled with their length and instruction count.

    Args:
        result: The simulation of the kernel (:func:`simcore.pipeline.simulator.simulate`).
        preset: The chip it was simulated on (for the clock).
        max_bars: The most instructions drawn before the schedule is cut into windows.
        width: Width of the picture in pixels.
        title: Caption; a description of the core and its time by default.
        id_prefix: Prefix of element ids, to keep them unique when pictures share a page.

    Returns:
        The SVG document.
    """
    core = result.slowest
    clock_mhz = preset.clock_mhz
    start_us = core.start / clock_mhz
    end_us = core.end / clock_mhz
    makespan_us = core.makespan_cycles / clock_mhz
    used = [i for i in range(len(PIPES)) if bool(np.any(core.pipe == i))]
    busy = {p: core.busy_cycles.get(p, 0.0) for p in PIPES}
    bottleneck = max(busy, key=lambda p: busy[p]) if any(busy.values()) else ""

    label_w, right_pad, gap_w = 190.0, 90.0, 64.0
    lane_h, bar_h, top = 24.0, 16.0, 46.0
    spans = _windows(start_us, end_us, max(max_bars, 1))
    plot_w = width - label_w - right_pad - gap_w * (len(spans) - 1)
    total_span = sum(b - a for a, b in spans) or 1.0
    windows: list[_Window] = []
    x = label_w
    for a, b in spans:
        span_w = plot_w * (b - a) / total_span
        windows.append(_Window(a, b, x, span_w))
        x += span_w + gap_w
    lanes_h = lane_h * len(used)
    axis_y = top + lanes_h + 4
    kinds_used = [k for k in range(len(KINDS)) if bool(np.any(core.kind == k))]
    legend_cols = 4
    legend_rows = math.ceil(len(kinds_used) / legend_cols)
    height = axis_y + 40 + 18 * legend_rows + 10

    caption = title or (
        f"Pipeline timeline of the slowest core ({core.shape.rows}×{core.shape.cols} of C, "
        f"{core.shape.cores} core{'s' if core.shape.cores != 1 else ''} with this shape): "
        f"{_fmt_us(makespan_us)} + {_fmt_us(result.launch_overhead_us)} launch, "
        f"{core.instructions} instructions"
    )
    out: list[str] = [_svg_open(width, height, "timeline", caption, id_prefix)]
    out.append(
        f"<text class='caption' x='8' y='16' font-size='12' font-weight='bold'>"
        f"{_text(caption)}</text>"
    )
    omitted = _omissions(windows, start_us, end_us, makespan_us, gap_w)
    if omitted:
        left_out = "; ".join(o.description for o in omitted)
        note = f"Long kernel ({core.instructions} instructions), left out: {left_out}."
        out.append(
            f"<text class='window-note' x='8' y='32' fill='#555' font-size='10'>"
            f"{_text(note)}</text>"
        )

    # Which instructions each window draws: those overlapping it, clipped to it.
    in_window = [(start_us < win.end_us) & (end_us > win.start_us) for win in windows]
    if len(windows) == 1:
        # The single window is the whole schedule: every instruction, zero-length ones included.
        in_window = [np.ones(len(start_us), dtype=bool)]

    for lane_no, pipe_idx in enumerate(used):
        pipe = PIPES[pipe_idx]
        y = top + lane_no * lane_h
        is_bottleneck = pipe == bottleneck
        util = busy[pipe] / core.makespan_cycles if core.makespan_cycles else 0.0
        out.append(
            f"<g class='lane' id={_attr(f'{id_prefix}lane-{pipe}')} data-pipe={_attr(pipe)} "
            f"data-bottleneck='{str(is_bottleneck).lower()}' "
            f"data-busy-us='{_data(busy[pipe] / clock_mhz)}'>"
        )
        label = f"{pipe}  {_fmt_us(busy[pipe] / clock_mhz)} busy ({util:.0%})"
        weight = "bold" if is_bottleneck else "normal"
        out.append(
            f"<text class='lane-label' x='8' y='{_num(y + lane_h / 2 + 4)}' "
            f"font-weight='{weight}'>{_text(label)}</text>"
        )
        if is_bottleneck:
            out.append(
                f"<text class='bottleneck-mark' x='{_num(width - right_pad + 6)}' "
                f"y='{_num(y + lane_h / 2 + 4)}' fill='#d62728' "
                f"font-weight='bold'>◀ bottleneck</text>"
            )
        for win in windows:
            stroke = "stroke='#d62728' stroke-width='1.5'" if is_bottleneck else "stroke='none'"
            out.append(
                f"<rect class='lane-bg' x='{_num(win.x0)}' y='{_num(y + 2)}' "
                f"width='{_num(win.width)}' height='{_num(lane_h - 4)}' fill='#eeeeee' {stroke}/>"
            )
        on_lane = core.pipe == pipe_idx
        for win, mask in zip(windows, in_window, strict=True):
            for i in np.flatnonzero(on_lane & mask):
                s, e = float(start_us[i]), float(end_us[i])
                x0 = win.x(max(s, win.start_us))
                x1 = win.x(min(e, win.end_us))
                kind = KINDS[int(core.kind[i])]
                tip = (
                    f"{KIND_LABELS[kind]}, block {int(core.block[i])}: "
                    f"{s:.3f}–{e:.3f} us ({e - s:.3f} us)"
                )
                # A floor on the width keeps very short instructions visible.
                out.append(
                    f"<rect class='bar' data-kind='{kind}' x='{_num(x0)}' "
                    f"y='{_num(y + (lane_h - bar_h) / 2)}' width='{_num(max(x1 - x0, 0.4))}' "
                    f"height='{_num(bar_h)}' fill='{KIND_COLOURS[kind]}'>"
                    f"<title>{_text(tip)}</title></rect>"
                )
        out.append("</g>")

    # Time axis, one per window, and the breaks between windows.
    out.append(f"<g class='axis' data-unit='us' transform='translate(0,{_num(axis_y)})'>")
    for win in windows:
        out.append(
            f"<line x1='{_num(win.x0)}' x2='{_num(win.x0 + win.width)}' y1='0' y2='0' "
            f"stroke='#333'/>"
        )
        span = win.end_us - win.start_us
        step = _nice_step(span, max(int(win.width / 60), 2))
        tick = math.ceil(win.start_us / step) * step
        while tick <= win.end_us + 1e-9 * max(step, 1.0):
            tx = win.x(tick)
            out.append(
                f"<line x1='{_num(tx)}' x2='{_num(tx)}' y1='0' y2='4' stroke='#333'/>"
                f"<text class='tick' x='{_num(tx)}' y='16' text-anchor='middle'>"
                f"{_text(f'{tick:.6g}')}</text>"
            )
            tick += step
    out.append(
        f"<text class='axis-label' x='{_num(width - right_pad + 6)}' y='16'>time (us)</text>"
    )
    out.append("</g>")

    for o in omitted:
        # A dashed break between windows; the tail only gets its label past the last window.
        brk = (
            ""
            if o.is_tail
            else f"<line x1='{_num(o.x)}' x2='{_num(o.x)}' y1='{_num(top - 2)}' "
            f"y2='{_num(axis_y + 2)}' stroke='#888' stroke-dasharray='4 3'/>"
        )
        out.append(
            f"<g class='omission' data-from-us='{_data(o.from_us)}' data-to-us='{_data(o.to_us)}' "
            f"data-instructions='{o.instructions}'><title>{_text(o.description)}</title>{brk}"
            f"<text class='omission-label' x='{_num(o.x)}' y='{_num(top - 5)}' "
            f"text-anchor='{o.anchor}' fill='#555' font-size='10'>{_text(o.short)}</text></g>"
        )

    # Legend: only the kinds this kernel issued.
    ly = axis_y + 34
    out.append("<g class='legend'>")
    col_w = (width - 16) / legend_cols
    for j, k in enumerate(kinds_used):
        kind = KINDS[k]
        lx = 8 + (j % legend_cols) * col_w
        yy = ly + (j // legend_cols) * 18
        out.append(
            f"<g class='legend-item' data-kind='{kind}'>"
            f"<rect x='{_num(lx)}' y='{_num(yy - 10)}' width='14' height='12' "
            f"fill='{KIND_COLOURS[kind]}'/>"
            f"<text x='{_num(lx + 20)}' y='{_num(yy)}'>"
            f"{_text(f'{KIND_LABELS[kind]} ({PIPES[_pipe_of_kind(core, k)]})')}</text></g>"
        )
    out.append("</g></svg>")
    return "".join(out)


def simulate_for_timeline(
    problem: Problem, tiling: TCubeTiling, preset: HardwarePreset
) -> SimResult | None:
    """Simulates a legal tiling when it is short enough to draw, else None.

    Kernels estimated above :data:`MAX_TIMELINE_INSTRUCTIONS` instructions per core are not
    simulated (it would take seconds).
    """
    if instruction_count(problem, tiling) > MAX_TIMELINE_INSTRUCTIONS:
        return None
    return simulate(problem, tiling, preset)


def timeline_svg_for(
    problem: Problem,
    tiling: TCubeTiling,
    preset: HardwarePreset,
    sim: SimResult | None = None,
    **options: Any,
) -> str | None:
    """Simulates a legal tiling and draws its timeline, or None when the kernel is too long.

    Kernels estimated above :data:`MAX_TIMELINE_INSTRUCTIONS` instructions per core are not
    simulated (it would take seconds); callers then show the estimator's figures alone.

    Args:
        problem: The Matmul.
        tiling: A legal tiling of it (:func:`simcore.tiling.legality.check_tiling`).
        preset: The chip.
        sim: The tiling's simulation when the caller already has it.
        **options: Passed to :func:`timeline_svg` (``max_bars``, ``width``, ``id_prefix``...).

    Returns:
        The SVG document, or None.
    """
    if sim is None:
        sim = simulate_for_timeline(problem, tiling, preset)
    return None if sim is None else timeline_svg(sim, preset, **options)


def _pipe_of_kind(core: Any, kind_idx: int) -> int:
    """The pipe that ran instructions of a kind (the first one found)."""
    return int(core.pipe[int(np.flatnonzero(core.kind == kind_idx)[0])])


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
    out = [_svg_open(width, height, "roofline", caption, id_prefix)]
    out.append(
        f"<text class='caption' x='8' y='16' font-size='12' font-weight='bold'>"
        f"{_text(caption)}</text>"
    )
    out.append(
        f"<rect class='plot-area' x='{_num(left)}' y='{_num(top)}' width='{_num(pw)}' "
        f"height='{_num(ph)}' fill='#fafafa' stroke='#999'/>"
    )
    # Decade grid and tick labels.
    out.append("<g class='axis' data-axis='x' data-unit='FLOP/byte'>")
    d = math.log10(x_lo)
    while d <= math.log10(x_hi) + 1e-9:
        gx = px(10**d)
        out.append(
            f"<line x1='{_num(gx)}' x2='{_num(gx)}' y1='{_num(top)}' y2='{_num(top + ph)}' "
            f"stroke='#ddd'/><text x='{_num(gx)}' y='{_num(top + ph + 14)}' "
            f"text-anchor='middle'>{_text(f'{10**d:g}')}</text>"
        )
        d += 1
    out.append(
        f"<text x='{_num(left + pw / 2)}' y='{_num(height - 10)}' text-anchor='middle'>"
        f"arithmetic intensity (FLOP per HBM byte)</text></g>"
    )
    out.append("<g class='axis' data-axis='y' data-unit='TFLOPS'>")
    d = math.log10(y_lo)
    while d <= math.log10(y_hi) + 1e-9:
        gy = py(10**d)
        out.append(
            f"<line x1='{_num(left)}' x2='{_num(left + pw)}' y1='{_num(gy)}' y2='{_num(gy)}' "
            f"stroke='#ddd'/><text x='{_num(left - 4)}' y='{_num(gy + 4)}' "
            f"text-anchor='end'>{_text(f'{10**d:g}')}</text>"
        )
        d += 1
    out.append(
        f"<text x='14' y='{_num(top + ph / 2)}' text-anchor='middle' "
        f"transform='rotate(-90 14 {_num(top + ph / 2)})'>TFLOPS</text></g>"
    )

    # The roof: HBM slope up to the ridge, then the cube peak.
    x_start = max(x_lo, y_lo / hbm_tb_s)
    roof_pts = [(x_start, x_start * hbm_tb_s), (ridge_ai, peak), (x_hi, peak)]
    poly = " ".join(f"{_num(px(a))},{_num(py(t))}" for a, t in roof_pts)
    out.append(
        f"<g class='roof'><polyline points='{poly}' fill='none' stroke='#222' "
        f"stroke-width='2'/>"
        f"<text x='{_num(px(ridge_ai) - 6)}' y='{_num(py(peak) - 5)}' text-anchor='end'>"
        f"{_text(f'cube peak {peak:.1f} TFLOPS ({problem.dtype.value})')}</text>"
        f"<text x='{_num(px(x_start) + 10)}' y='{_num(py(x_start * hbm_tb_s) - 10)}'>"
        f"{_text(f'HBM {roof.hbm_gbps:.0f} GB/s')}</text></g>"
    )
    ax = px(problem_ai)
    out.append(
        f"<g class='problem-intensity' data-ai='{_data(problem_ai)}'>"
        f"<line x1='{_num(ax)}' x2='{_num(ax)}' y1='{_num(top)}' y2='{_num(top + ph)}' "
        f"stroke='#888' stroke-dasharray='5 4'/>"
        f"<text x='{_num(ax + 3)}' y='{_num(top + ph - 6)}' fill='#555' font-size='9'>"
        f"{_text(f'this problem: {problem_ai:.4g} FLOP/B ({roof.limited_by}-bound)')}"
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
        colour = _ROLE_COLOURS.get(role, "#333333")
        cx, cy = px(ai), py(tflops)
        marker = (
            f"<rect x='{_num(cx - 4)}' y='{_num(cy - 4)}' width='8' height='8' "
            f"fill='none' stroke='{colour}' stroke-width='1.5'/>"
            if role == "bound"
            else f"<circle cx='{_num(cx)}' cy='{_num(cy)}' r='5' fill='{colour}'/>"
        )
        out.append(
            f"<g class='point' data-role={_attr(role)} data-label={_attr(label)} "
            f"data-tflops='{_data(tflops)}'>{marker}"
            f"<line x1='{_num(cx + 5)}' y1='{_num(cy)}' x2='{_num(lx - 2)}' "
            f"y2='{_num(label_y[i] - 3)}' stroke='{colour}' stroke-width='0.5'/>"
            f"<text x='{_num(lx)}' y='{_num(label_y[i])}' fill='{colour}' font-size='10'>"
            f"{_text(f'{label}: {tflops:.4g} TFLOPS')}</text></g>"
        )
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Per-pipe comparison
# --------------------------------------------------------------------------------------------


def pipes_svg(
    series: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    width: float = 800.0,
    id_prefix: str = "",
) -> str:
    """Compares per-pipe busy time of several tilings (tuned first, then baselines) as bars.

    One group of horizontal bars per pipe any series uses, plus a last group with each kernel's
    predicted time, so a reader sees which pipe the tuned tiling unloaded.

    Args:
        series: ``(label, estimate)`` pairs; each estimate as
            :func:`simcore.evaluate.estimate_dict` returns it (``pipe_busy_us``, ``time_us``).
            Pairs whose estimate is empty (an illegal baseline) are skipped.
        width: Width of the picture in pixels.
        id_prefix: Prefix of element ids.

    Returns:
        The SVG document.
    """
    rows = [(label, est) for label, est in series if est]
    pipes = [
        p for p in PIPES if any(float(e.get("pipe_busy_us", {}).get(p, 0)) > 0 for _, e in rows)
    ]
    groups: list[tuple[str, list[float]]] = [
        (p, [float(e.get("pipe_busy_us", {}).get(p, 0.0)) for _, e in rows]) for p in pipes
    ]
    groups.append(("kernel time", [float(e.get("time_us", 0.0)) for _, e in rows]))
    bar_h, group_gap, left, right, top = 12.0, 10.0, 90.0, 80.0, 30.0
    group_h = bar_h * max(len(rows), 1) + group_gap
    legend_y = top + group_h * len(groups) + 10
    height = legend_y + 18 * len(rows) + 8
    vmax = max([v for _, vals in groups for v in vals] + [1e-9])
    pw = width - left - right

    caption = "Busy time per pipe (slowest core) and kernel time, us"
    out = [_svg_open(width, height, "pipes", caption, id_prefix)]
    out.append(
        f"<text class='caption' x='8' y='16' font-size='12' font-weight='bold'>"
        f"{_text(caption)}</text>"
    )
    for g, (name, vals) in enumerate(groups):
        gy = top + g * group_h
        out.append(
            f"<g class='pipe-group' data-pipe={_attr(name)}>"
            f"<text x='{_num(left - 6)}' y='{_num(gy + bar_h * len(rows) / 2 + 4)}' "
            f"text-anchor='end' font-weight='bold'>{_text(name)}</text>"
        )
        for j, ((label, _), value) in enumerate(zip(rows, vals, strict=True)):
            colour = _SERIES_COLOURS[j % len(_SERIES_COLOURS)]
            w = pw * value / vmax
            y = gy + j * bar_h
            out.append(
                f"<rect class='pipe-bar' data-pipe={_attr(name)} data-series={_attr(label)} "
                f"data-us='{_data(value)}' x='{_num(left)}' y='{_num(y)}' "
                f"width='{_num(max(w, 0.5))}' height='{_num(bar_h - 2)}' fill='{colour}'>"
                f"<title>{_text(f'{label}: {name} {value:.4g} us')}</title></rect>"
                f"<text x='{_num(left + w + 4)}' y='{_num(y + bar_h - 3)}' font-size='9'>"
                f"{_text(f'{value:.4g}')}</text>"
            )
        out.append("</g>")
    out.append("<g class='legend'>")
    for j, (label, _) in enumerate(rows):
        colour = _SERIES_COLOURS[j % len(_SERIES_COLOURS)]
        y = legend_y + j * 18
        out.append(
            f"<g class='legend-item' data-series={_attr(label)}>"
            f"<rect x='{_num(left)}' y='{_num(y)}' width='14' height='12' fill='{colour}'/>"
            f"<text x='{_num(left + 20)}' y='{_num(y + 10)}'>{_text(label)}</text></g>"
        )
    out.append("</g></svg>")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# A whole tune answer
# --------------------------------------------------------------------------------------------


def _embed(svg: str, x: float, y: float) -> str:
    """Places a standalone SVG document inside another (a nested <svg> element)."""
    head, rest = svg.split(">", 1)
    return f"{head} x='{_num(x)}' y='{_num(y)}'>{rest}"


def _svg_size(svg: str) -> tuple[float, float]:
    head = svg.split(">", 1)[0]
    w = float(head.split("width='", 1)[1].split("'", 1)[0])
    h = float(head.split("height='", 1)[1].split("'", 1)[0])
    return w, h


def answer_svg(answer: Mapping[str, Any], problem: Problem, preset: HardwarePreset) -> str:
    """Draws a tune answer: the tuned tiling's timeline, the roofline and the pipe comparison.

    Args:
        answer: What ``tiler.tune.tune`` returns (``tiling`` with every struct field,
            ``estimate``, ``baselines`` as ``[{name, tiling, estimate, speedup}]``, ...).
        problem: The problem that was tuned.
        preset: The chip it was tuned for.

    Returns:
        One SVG document holding the three pictures, one under the other.
    """
    tiling = complete_tiling(dict(answer["tiling"]), problem, preset)
    estimate: Mapping[str, Any] = answer.get("estimate") or {}
    baselines = [b for b in answer.get("baselines") or [] if isinstance(b, Mapping)]
    width = 960.0

    parts: list[str] = []
    timeline = timeline_svg_for(problem, tiling, preset, width=width, id_prefix="answer-")
    if timeline is not None:
        parts.append(timeline)
    points = roofline_points("tuned", "tuned", estimate, bounds=True)
    for b in baselines:
        points += roofline_points(str(b.get("name", "baseline")), "baseline", b.get("estimate"))
    parts.append(roofline_svg(problem, preset, points, width=width, id_prefix="answer-"))
    series = [("tuned", estimate)] + [
        (str(b.get("name", "baseline")), b.get("estimate") or {}) for b in baselines
    ]
    parts.append(pipes_svg(series, width=width, id_prefix="answer-"))

    header_h = 30.0
    time_text = f"{_fmt_us(float(estimate['time_us']))}" if "time_us" in estimate else "n/a"
    speedups = ", ".join(
        f"{b.get('name')}: ×{float(b['speedup']):.3g}"
        for b in baselines
        if isinstance(b.get("speedup"), int | float)
    )
    heading = (
        f"Tuned TCubeTiling for {problem.m}×{problem.n}×{problem.k} {problem.dtype.value} "
        f"on {preset.soc}: {time_text}" + (f" (speedup over {speedups})" if speedups else "")
    )
    if len(parts) == 2:
        heading += " (kernel too long to draw its timeline)"
    height = header_h + sum(_svg_size(p)[1] + 12 for p in parts)
    out = [_svg_open(width, height, "answer", heading, "")]
    out.append(
        f"<text class='caption' x='8' y='20' font-size='14' font-weight='bold'>"
        f"{_text(heading)}</text>"
    )
    y = header_h
    for p in parts:
        out.append(_embed(p, 0, y))
        y += _svg_size(p)[1] + 12
    out.append("</svg>")
    return "".join(out)
