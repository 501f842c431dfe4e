"""Roofline lower bounds of a problem on a chip.

* Compute: every multiply-accumulate on the cube at its peak rate on every core
  (``2 x M x N x K / (2 x macs_per_cycle x cores)`` cycles).
* Memory: A and B read and C written once from/to HBM at the chip's HBM bandwidth (ini ddr_rate
  x cores, ascend_soc_params.md caveat 7).

Both include the kernel launch overhead, which no tiling avoids. No tiling can be predicted faster
than ``max(compute, memory)``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from simcore.hardware.dtypes import bits
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.traffic import c_gm_bytes_per_element, kernel_us
from simcore.tiling.problem import Problem


@dataclass(frozen=True)
class Roofline:
    """Lower bounds in microseconds, and the peak rates they come from."""

    compute_bound_us: float
    memory_bound_us: float
    bound_us: float
    limited_by: str
    peak_tflops: float
    hbm_gbps: float
    arithmetic_intensity_flops_per_byte: float

    def to_dict(self) -> dict[str, float | str]:
        """Returns the bounds as a JSON-ready dict."""
        return asdict(self)


def roofline(problem: Problem, preset: HardwarePreset) -> Roofline:
    """Computes the compute and memory lower bounds of ``problem`` on ``preset``."""
    macs = preset.cube_macs_per_cycle.get(problem.dtype, 0)
    if macs <= 0:
        raise ValueError(f"{preset.soc} has no {problem.dtype} cube rate")
    mac_count = problem.m * problem.n * problem.k
    compute_cycles = mac_count / (macs * preset.cube_core_count)
    in_b = bits(problem.dtype) / 8.0
    out_b = c_gm_bytes_per_element(problem)
    total_bytes = (problem.m + problem.n) * problem.k * in_b + problem.m * problem.n * out_b
    memory_cycles = total_bytes / preset.hbm_bytes_per_cycle
    compute_us = float(kernel_us(preset, preset.cycles_to_us(compute_cycles)))
    memory_us = float(kernel_us(preset, preset.cycles_to_us(memory_cycles)))
    return Roofline(
        compute_bound_us=compute_us,
        memory_bound_us=memory_us,
        bound_us=max(compute_us, memory_us),
        limited_by="compute" if compute_cycles >= memory_cycles else "memory",
        peak_tflops=2.0 * macs * preset.cube_core_count * preset.clock_hz / 1e12,
        hbm_gbps=preset.hbm_bytes_per_cycle * preset.clock_hz / 1e9,
        arithmetic_intensity_flops_per_byte=2.0 * mac_count / total_bytes,
    )
