"""SVG pictures of a tiling: the pipeline timeline, the roofline and the per-pipe comparison.

Pure functions from model results to SVG text (no web framework), shared by the explorer page,
the ``/v1/tilings/{id}/timeline.svg`` route and ``tiler tune --svg``:

* :func:`timeline_svg`: a Gantt chart of the slowest core's simulated pipes, one lane per queue
  the chip uses, bars coloured by instruction kind; long kernels show their first iterations and a
  steady-state window, with the omitted spans labelled.
* :func:`roofline_svg`: the compute and HBM roofs of :mod:`simcore.estimate.roofline` with tilings
  and bounds as labelled points (drawn in :mod:`app.views.roofline`; the shared formatting is
  :mod:`app.views.svg_parts`).
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

import numpy as np

from app.views.roofline import roofline_points, roofline_svg
from app.views.svg_parts import (
    SERIES_COLOURS,
    attr,
    data,
    fmt_us,
    nice_step,
    num,
    svg_open,
    text,
)
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
        span = fmt_us(self.to_us - self.from_us)
        return f"+{span} to the end ⋯" if self.is_tail else f"⋯ {span} ⋯"

    @property
    def description(self) -> str:
        where = "the last" if self.is_tail else "between the first iterations and the steady state"
        span = fmt_us(self.to_us - self.from_us)
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
        f"{fmt_us(makespan_us)} + {fmt_us(result.launch_overhead_us)} launch, "
        f"{core.instructions} instructions"
    )
    out: list[str] = [svg_open(width, height, "timeline", caption, id_prefix)]
    out.append(
        f"<text class='caption' x='8' y='16' font-size='12' font-weight='bold'>"
        f"{text(caption)}</text>"
    )
    omitted = _omissions(windows, start_us, end_us, makespan_us, gap_w)
    if omitted:
        left_out = "; ".join(o.description for o in omitted)
        note = f"Long kernel ({core.instructions} instructions), left out: {left_out}."
        out.append(
            f"<text class='window-note' x='8' y='32' fill='#555' font-size='10'>{text(note)}</text>"
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
            f"<g class='lane' id={attr(f'{id_prefix}lane-{pipe}')} data-pipe={attr(pipe)} "
            f"data-bottleneck='{str(is_bottleneck).lower()}' "
            f"data-busy-us='{data(busy[pipe] / clock_mhz)}'>"
        )
        label = f"{pipe}  {fmt_us(busy[pipe] / clock_mhz)} busy ({util:.0%})"
        weight = "bold" if is_bottleneck else "normal"
        out.append(
            f"<text class='lane-label' x='8' y='{num(y + lane_h / 2 + 4)}' "
            f"font-weight='{weight}'>{text(label)}</text>"
        )
        if is_bottleneck:
            out.append(
                f"<text class='bottleneck-mark' x='{num(width - right_pad + 6)}' "
                f"y='{num(y + lane_h / 2 + 4)}' fill='#d62728' "
                f"font-weight='bold'>◀ bottleneck</text>"
            )
        for win in windows:
            stroke = "stroke='#d62728' stroke-width='1.5'" if is_bottleneck else "stroke='none'"
            out.append(
                f"<rect class='lane-bg' x='{num(win.x0)}' y='{num(y + 2)}' "
                f"width='{num(win.width)}' height='{num(lane_h - 4)}' fill='#eeeeee' {stroke}/>"
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
                    f"<rect class='bar' data-kind='{kind}' x='{num(x0)}' "
                    f"y='{num(y + (lane_h - bar_h) / 2)}' width='{num(max(x1 - x0, 0.4))}' "
                    f"height='{num(bar_h)}' fill='{KIND_COLOURS[kind]}'>"
                    f"<title>{text(tip)}</title></rect>"
                )
        out.append("</g>")

    # Time axis, one per window, and the breaks between windows.
    out.append(f"<g class='axis' data-unit='us' transform='translate(0,{num(axis_y)})'>")
    for win in windows:
        out.append(
            f"<line x1='{num(win.x0)}' x2='{num(win.x0 + win.width)}' y1='0' y2='0' stroke='#333'/>"
        )
        span = win.end_us - win.start_us
        step = nice_step(span, max(int(win.width / 60), 2))
        tick = math.ceil(win.start_us / step) * step
        while tick <= win.end_us + 1e-9 * max(step, 1.0):
            tx = win.x(tick)
            out.append(
                f"<line x1='{num(tx)}' x2='{num(tx)}' y1='0' y2='4' stroke='#333'/>"
                f"<text class='tick' x='{num(tx)}' y='16' text-anchor='middle'>"
                f"{text(f'{tick:.6g}')}</text>"
            )
            tick += step
    out.append(f"<text class='axis-label' x='{num(width - right_pad + 6)}' y='16'>time (us)</text>")
    out.append("</g>")

    for o in omitted:
        # A dashed break between windows; the tail only gets its label past the last window.
        brk = (
            ""
            if o.is_tail
            else f"<line x1='{num(o.x)}' x2='{num(o.x)}' y1='{num(top - 2)}' "
            f"y2='{num(axis_y + 2)}' stroke='#888' stroke-dasharray='4 3'/>"
        )
        out.append(
            f"<g class='omission' data-from-us='{data(o.from_us)}' data-to-us='{data(o.to_us)}' "
            f"data-instructions='{o.instructions}'><title>{text(o.description)}</title>{brk}"
            f"<text class='omission-label' x='{num(o.x)}' y='{num(top - 5)}' "
            f"text-anchor='{o.anchor}' fill='#555' font-size='10'>{text(o.short)}</text></g>"
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
            f"<rect x='{num(lx)}' y='{num(yy - 10)}' width='14' height='12' "
            f"fill='{KIND_COLOURS[kind]}'/>"
            f"<text x='{num(lx + 20)}' y='{num(yy)}'>"
            f"{text(f'{KIND_LABELS[kind]} ({PIPES[_pipe_of_kind(core, k)]})')}</text></g>"
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
    out = [svg_open(width, height, "pipes", caption, id_prefix)]
    out.append(
        f"<text class='caption' x='8' y='16' font-size='12' font-weight='bold'>"
        f"{text(caption)}</text>"
    )
    for g, (name, vals) in enumerate(groups):
        gy = top + g * group_h
        out.append(
            f"<g class='pipe-group' data-pipe={attr(name)}>"
            f"<text x='{num(left - 6)}' y='{num(gy + bar_h * len(rows) / 2 + 4)}' "
            f"text-anchor='end' font-weight='bold'>{text(name)}</text>"
        )
        for j, ((label, _), value) in enumerate(zip(rows, vals, strict=True)):
            colour = SERIES_COLOURS[j % len(SERIES_COLOURS)]
            w = pw * value / vmax
            y = gy + j * bar_h
            out.append(
                f"<rect class='pipe-bar' data-pipe={attr(name)} data-series={attr(label)} "
                f"data-us='{data(value)}' x='{num(left)}' y='{num(y)}' "
                f"width='{num(max(w, 0.5))}' height='{num(bar_h - 2)}' fill='{colour}'>"
                f"<title>{text(f'{label}: {name} {value:.4g} us')}</title></rect>"
                f"<text x='{num(left + w + 4)}' y='{num(y + bar_h - 3)}' font-size='9'>"
                f"{text(f'{value:.4g}')}</text>"
            )
        out.append("</g>")
    out.append("<g class='legend'>")
    for j, (label, _) in enumerate(rows):
        colour = SERIES_COLOURS[j % len(SERIES_COLOURS)]
        y = legend_y + j * 18
        out.append(
            f"<g class='legend-item' data-series={attr(label)}>"
            f"<rect x='{num(left)}' y='{num(y)}' width='14' height='12' fill='{colour}'/>"
            f"<text x='{num(left + 20)}' y='{num(y + 10)}'>{text(label)}</text></g>"
        )
    out.append("</g></svg>")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# A whole tune answer
# --------------------------------------------------------------------------------------------


def _embed(svg: str, x: float, y: float) -> str:
    """Places a standalone SVG document inside another (a nested <svg> element)."""
    head, rest = svg.split(">", 1)
    return f"{head} x='{num(x)}' y='{num(y)}'>{rest}"


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
    time_text = f"{fmt_us(float(estimate['time_us']))}" if "time_us" in estimate else "n/a"
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
    out = [svg_open(width, height, "answer", heading, "")]
    out.append(
        f"<text class='caption' x='8' y='20' font-size='14' font-weight='bold'>"
        f"{text(heading)}</text>"
    )
    y = header_h
    for p in parts:
        out.append(_embed(p, 0, y))
        y += _svg_size(p)[1] + 12
    out.append("</svg>")
    return "".join(out)
