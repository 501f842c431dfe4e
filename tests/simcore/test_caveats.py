"""The model's named caveats: each fires exactly where its source's condition holds."""

from __future__ import annotations

import pytest

from simcore.caveats import assumed_constants, meta_conflict, model_caveats, serial_startup
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem

B2 = load_preset("Ascend910B2")
#: 910B2 with the start-up overlapped (the model before 2026.11.28.2, and still arch 2002's):
#: the case the serial-startup caveat is about.
OVERLAPPED_B2 = B2.model_copy(update={"scalar_startup_serial": False})


def _hits(**kw: object) -> str | None:
    problem = Problem(**{"soc": "Ascend910B2", **kw})  # type: ignore[arg-type]
    caveat = meta_conflict(problem, load_preset(problem.soc))
    return caveat.message if caveat else None


def test_a_16384_row_pitch_of_either_operand_is_named() -> None:
    # A (4096 x 16384, K inner) and B (16384 x 16384, N inner) both have a 16384-element pitch.
    message = _hits(m=4096, n=16384, k=16384)
    assert message is not None
    assert "A (inner axis 16384, outer 4096)" in message
    assert "B (inner axis 16384, outer 16384)" in message


@pytest.mark.parametrize(
    ("kw", "reason"),
    [
        ({"m": 8192, "n": 8192, "k": 8192}, "a pitch of exactly 8192 is outside the rule"),
        ({"m": 4096, "n": 4096, "k": 16640}, "16384 + 256: padded, not a multiple of 8192"),
        ({"m": 1024, "n": 4096, "k": 16384}, "A's outer axis below 2048"),
        ({"m": 4096, "n": 4096, "k": 16384, "dtype": "int8"}, "the rule is the b16 selector's"),
        ({"m": 4096, "n": 4096, "k": 16384, "soc": "Ascend910A"}, "A2 / A3 only"),
        ({"m": 4096, "n": 4096, "k": 16384, "format_a": "NZ"}, "only ND operands are padded"),
    ],
)
def test_shapes_outside_the_rule_are_not_named(kw: dict[str, object], reason: str) -> None:
    assert _hits(**kw) is None, reason


def test_transposes_move_the_inner_axis() -> None:
    # A transposed is K x M with M inner; B transposed is N x K with K inner.
    message = _hits(m=16384, n=4096, k=4096, trans_a=True)
    assert message is not None and "A (inner axis 16384, outer 4096)" in message
    message = _hits(m=4096, n=2048, k=24576, trans_b=True)
    assert message is not None and "B (inner axis 24576, outer 2048)" in message
    assert "A (inner axis 24576" in message
    assert _hits(m=4096, n=16384, k=4096, trans_b=True) is None


def test_the_serial_startup_is_named_where_it_is_at_least_five_percent() -> None:
    # 6,542 cycles at 1,800 MHz (910B2) are 3.63 us: 36 % of a 10 us kernel, 3.6 % of 100 us.
    b2 = OVERLAPPED_B2
    startup_us = b2.cycles_to_us(b2.scalar_startup_cycles)
    assert startup_us == pytest.approx(6542 / 1800, rel=1e-9)
    caveat = serial_startup(b2, 10.0)
    assert caveat is not None and "up to 36% longer" in caveat.message
    assert serial_startup(b2, 100.0) is None
    assert serial_startup(b2, startup_us / 0.05) is not None
    assert serial_startup(b2, startup_us / 0.05 * 1.001) is None
    # Where the model runs the start-up before the first copy (910B as shipped since model
    # 2026.11.28.2, arch 2002 since 2026.11.28.3), there is nothing to warn about.
    for shipped in (B2, load_preset("Ascend910A")):
        assert shipped.scalar_startup_serial
        assert serial_startup(shipped, 10.0) is None


def test_assumed_constants_follow_the_sources() -> None:
    on_910a = assumed_constants(load_preset("Ascend910A"))
    assert on_910a is not None
    # 910A has no profiler file: the scalar pipe's fits are the 910B1 values.
    assert "scalar_step_cycles" in on_910a.message
    # The start-up is the serial-startup caveat's, not repeated here.
    assert "scalar_startup_cycles" not in on_910a.message
    assert "scalar_startup_serial" not in on_910a.message
    on_910b1 = assumed_constants(load_preset("Ascend910B1"))
    # 910B1's scalar pipe is fitted on its own profiler file.
    assert on_910b1 is None or "scalar_step_cycles" not in on_910b1.message


def test_model_caveats_lists_each_that_applies_in_order() -> None:
    problem = Problem(soc="Ascend910B2", m=4096, n=16384, k=16384)
    ids = [c.id for c in model_caveats(problem, OVERLAPPED_B2, device_time_us=5.0)]
    assert ids[:2] == ["meta_conflict_stride", "serial_startup"]
    plain = Problem(soc="Ascend910B2", m=4096, n=4096, k=4096)
    ids = [c.id for c in model_caveats(plain, OVERLAPPED_B2, device_time_us=500.0)]
    assert "meta_conflict_stride" not in ids and "serial_startup" not in ids
