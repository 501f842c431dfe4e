"""The SVG pictures: well-formed, one lane per pipe used, every instruction drawn or counted."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

import numpy as np
import pytest

from app.views.svg import (
    answer_svg,
    pipes_svg,
    roofline_points,
    roofline_svg,
    timeline_svg,
    timeline_svg_for,
)
from simcore.evaluate import estimate_dict, evaluate, parse_request
from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import KINDS, PIPES, SimResult, simulate
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import parse_problem
from tests.support.random_tilings import random_tiling
from tiler.tune import parse_tune_request, tune

NS = "{http://www.w3.org/2000/svg}"

SMALL = {
    "problem": {"soc": "Ascend910B2", "m": 256, "n": 256, "k": 256, "dtype": "fp16"},
    "tiling": {
        "usedCoreNum": 1, "singleCoreM": 256, "singleCoreN": 256, "baseM": 128, "baseN": 128,
        "baseK": 64, "depthA1": 8, "depthB1": 8, "stepM": 2, "stepN": 2, "stepKa": 4, "stepKb": 4,
    },
}  # fmt: skip

# The README's example: 24 cores, 5 000+ instructions on the slowest core.
LONG = {
    "problem": {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096, "dtype": "fp16"},
    "tiling": {
        "usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 768, "baseM": 128, "baseN": 256,
        "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8, "stepKb": 4,
    },
}  # fmt: skip


def _sim(request: dict[str, Any]) -> tuple[SimResult, Any, Any, Any]:
    problem, tiling, preset = parse_request(request)
    assert check_tiling(problem, tiling, preset).valid
    return simulate(problem, tiling, preset), problem, tiling, preset


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # raises on malformed XML
    assert root.tag == f"{NS}svg"
    return root


def _lanes(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{NS}g") if g.get("class") == "lane"]


def _bars(el: ET.Element) -> list[ET.Element]:
    return [r for r in el.iter(f"{NS}rect") if r.get("class") == "bar"]


def _used_pipes(result: SimResult) -> list[str]:
    return [p for i, p in enumerate(PIPES) if np.any(result.slowest.pipe == i)]


def test_small_kernel_draws_every_instruction_on_its_pipes_lane() -> None:
    result, *_, preset = _sim(SMALL)
    root = _parse(timeline_svg(result, preset))
    core = result.slowest
    assert core.instructions < 1500  # small enough for the default max_bars: nothing omitted
    assert len(_bars(root)) == core.instructions
    lanes = _lanes(root)
    assert [g.get("data-pipe") for g in lanes] == ["MTE2", "MTE1", "M", "FIX"]
    for lane in lanes:
        pipe_idx = PIPES.index(lane.get("data-pipe", ""))
        expected = Counter(KINDS[k] for k in core.kind[core.pipe == pipe_idx])
        assert Counter(b.get("data-kind") for b in _bars(lane)) == expected
    assert not [g for g in root.iter(f"{NS}g") if g.get("class") == "omission"]


def test_chip_without_fixpipe_gets_vector_and_mte3_lanes_instead_of_fix() -> None:
    problem = parse_problem({"soc": "Ascend910A", "m": 200, "n": 300, "k": 160})
    preset = load_preset("Ascend910A")
    tiling = random_tiling(problem, preset, np.random.default_rng(7))
    result = simulate(problem, tiling, preset)
    root = _parse(timeline_svg(result, preset, max_bars=100_000))
    pipes = [g.get("data-pipe") for g in _lanes(root)]
    assert pipes == _used_pipes(result)
    assert "FIX" not in pipes
    assert {"V", "MTE3"} <= set(pipes)
    assert len(_bars(root)) == result.slowest.instructions


def test_bottleneck_lane_is_the_busiest_pipe_the_evaluate_answer_names() -> None:
    result, problem, tiling, preset = _sim(LONG)
    root = _parse(timeline_svg(result, preset))
    marked = [g.get("data-pipe") for g in _lanes(root) if g.get("data-bottleneck") == "true"]
    assert marked == [evaluate(problem, tiling, preset)["estimate"]["bottleneck"]]
    assert any(t.text and "bottleneck" in t.text for t in root.iter(f"{NS}text"))


def test_bars_sit_at_their_simulated_times_on_the_axis() -> None:
    # Bars are placed on a linear us axis: the ratio of start offsets matches the simulation.
    result, *_, preset = _sim(SMALL)
    root = _parse(timeline_svg(result, preset))
    core = result.slowest
    xs = sorted(float(b.get("x", "nan")) for b in _bars(root))
    starts = np.sort(core.start) / preset.clock_mhz
    # Map the earliest and the latest start; every other start must fall on the same line.
    scale = (xs[-1] - xs[0]) / (starts[-1] - starts[0])
    predicted = xs[0] + (starts - starts[0]) * scale
    assert np.allclose(xs, predicted, atol=0.05)
    ticks = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "tick"]
    assert ticks[0] == "0"
    assert float(ticks[-1] or "inf") <= core.makespan_cycles / preset.clock_mhz


def test_long_kernel_shows_head_and_steady_state_with_the_omission_labelled() -> None:
    result, *_, preset = _sim(LONG)
    core = result.slowest
    assert core.instructions > 5000
    root = _parse(timeline_svg(result, preset, max_bars=600))
    bars = _bars(root)
    # About max_bars are drawn (a few more: instructions straddling a window edge are clipped).
    assert 600 <= len(bars) < 700
    omissions = [g for g in root.iter(f"{NS}g") if g.get("class") == "omission"]
    assert omissions, "the cut must be marked"
    labels = [t.text or "" for g in omissions for t in g.iter(f"{NS}text")]
    assert any(re.search(r"\d+(\.\d+)? us", text) for text in labels)
    note = [t.text or "" for t in root.iter(f"{NS}text") if t.get("class") == "window-note"]
    assert note and "left out" in note[0]
    # The first gap lies between the windows: the head starts at 0, the steady state later.
    first = omissions[0]
    assert 0 < float(first.get("data-from-us", "0")) < float(first.get("data-to-us", "0"))
    # Drawn + left-out instructions cover the whole schedule (each counted once at most).
    left_out = sum(int(g.get("data-instructions", "0")) for g in omissions)
    assert len(bars) + left_out <= core.instructions
    assert len(bars) + left_out >= core.instructions - 10
    # Every lane still appears, with bars in both windows.
    assert [g.get("data-pipe") for g in _lanes(root)] == _used_pipes(result)


def test_roofline_places_faster_tilings_higher_and_escapes_labels() -> None:
    _, problem, tiling, preset = _sim(SMALL)
    est = estimate_dict(problem, tiling, preset)
    slower = dict(est, time_us=est["time_us"] * 2)
    points = roofline_points("tuned", "tuned", est, bounds=True)
    points += roofline_points('mine <&> "cann"', "baseline", slower)
    root = _parse(roofline_svg(problem, preset, points))
    drawn = {g.get("data-label"): g for g in root.iter(f"{NS}g") if g.get("class") == "point"}
    assert set(drawn) == {p["label"] for p in points}

    def y_of(g: ET.Element) -> float:
        circle = g.find(f"{NS}circle")
        assert circle is not None
        return float(circle.get("cy", "nan"))

    assert y_of(drawn["tuned"]) < y_of(drawn['mine <&> "cann"'])
    tflops = {label: float(g.get("data-tflops", "nan")) for label, g in drawn.items()}
    assert tflops["tuned"] == pytest.approx(problem.flops / est["time_us"] / 1e6, 1e-3)
    assert tflops['mine <&> "cann"'] == pytest.approx(tflops["tuned"] / 2, 1e-3)
    # The roofline bound is the highest point: no tiling beats the roof.
    assert max(tflops, key=lambda k: tflops[k]) == "roofline bound (with launch)"


def test_pipes_chart_has_one_bar_per_pipe_and_tiling_scaled_to_busy_time() -> None:
    _, problem, tiling, preset = _sim(LONG)
    est = estimate_dict(problem, tiling, preset)
    other = dict(est, pipe_busy_us={p: v / 2 for p, v in est["pipe_busy_us"].items()})
    root = _parse(pipes_svg([("tuned", est), ("baseline", other), ("illegal", {})]))
    bars = [r for r in root.iter(f"{NS}rect") if r.get("class") == "pipe-bar"]
    groups = [*est["pipe_busy_us"], "kernel time"]
    assert len(bars) == 2 * len(groups)
    width = {(r.get("data-pipe"), r.get("data-series")): float(r.get("width", "0")) for r in bars}
    for pipe in est["pipe_busy_us"]:
        assert width[(pipe, "baseline")] == pytest.approx(width[(pipe, "tuned")] / 2, abs=0.02)


def test_answer_svg_draws_a_real_tune_answer_with_its_baselines() -> None:
    illegal = dict(SMALL["tiling"], baseM=4096)  # the user's baseline overflows L0A
    req = parse_tune_request({"problem": SMALL["problem"], "baseline": illegal, "budget": 0})
    answer = tune(req)
    problem, tiling, preset = parse_request({"problem": req.problem, "tiling": answer["tiling"]})
    root = _parse(answer_svg(answer, problem, preset))
    parts = [el.get("class") for el in root if el.tag == f"{NS}svg"]
    assert parts == ["timeline", "roofline", "pipes"]
    ids = [el.get("id") for el in root.iter() if el.get("id")]
    assert len(ids) == len(set(ids))
    # The timeline is the tuned tiling's: every instruction of its slowest core.
    assert len(_bars(root)) == simulate(problem, tiling, preset).slowest.instructions
    # Legal baselines appear on the roofline and in the pipe comparison; the illegal one cannot.
    legal = [b["name"] for b in answer["baselines"] if b["estimate"]]
    assert "user" not in legal
    labels = {g.get("data-label") for g in root.iter(f"{NS}g") if g.get("class") == "point"}
    assert {"tuned", *legal} <= labels and "user" not in labels
    series = {r.get("data-series") for r in root.iter(f"{NS}rect") if r.get("class") == "pipe-bar"}
    assert series == {"tuned", *legal}


def test_kernels_too_long_to_simulate_get_no_timeline() -> None:
    # One core walking 64 x 32 blocks of 128 K steps: ~800 000 instructions.
    request = {
        "problem": {"soc": "Ascend910B2", "m": 8192, "n": 8192, "k": 8192},
        "tiling": dict(LONG["tiling"], usedCoreNum=1, singleCoreM=8192, singleCoreN=8192),
    }
    problem, tiling, preset = parse_request(request)
    assert timeline_svg_for(problem, tiling, preset) is None
    small = parse_request(SMALL)
    drawn = timeline_svg_for(*small)
    assert drawn is not None
    assert len(_bars(_parse(drawn))) == simulate(*small).slowest.instructions
