"""Hardware presets: one validated, immutable description of an Ascend SoC per name.

The packaged presets live in ``simcore/hardware/data/presets/<SoC>.json``; every field there
carries the source of its value (the CANN platform ini through ``ascend_soc_params.csv``, a fit to
the msKPP curves, or a stated assumption). ``scripts/gen_presets.py`` writes them. A custom preset
(a user's own chip) is a :class:`HardwarePreset` built from a dict, usually a packaged preset with
a few fields overridden (:func:`custom_preset`).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from simcore.errors import InputError, UnknownSocError
from simcore.hardware.dtypes import DType

_PRESET_PACKAGE = "simcore.hardware.data.presets"


class HardwarePreset(BaseModel):
    """Everything the model knows about one SoC. Sizes in bytes, rates in bytes per cycle.

    Attributes mirror the packaged preset files; ``sources`` maps each field to where its value
    comes from and is not part of the digest.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    soc: str = Field(min_length=1, max_length=64)
    npu_arch: int
    short_soc_version: str = ""
    cube_core_count: int = Field(ge=1, le=1024)
    vector_core_count: int = Field(ge=0, le=2048)
    clock_mhz: float = Field(gt=0, le=10_000)
    l0a_bytes: int = Field(gt=0)
    l0b_bytes: int = Field(gt=0)
    l0c_bytes: int = Field(gt=0)
    l1_bytes: int = Field(gt=0)
    ub_bytes: int = Field(gt=0)
    bt_bytes: int = Field(ge=0)
    fb_bytes: int = Field(ge=0)
    l2_bytes: int = Field(ge=0)
    hbm_bytes: int | None = None
    hbm_bytes_per_cycle_per_core: float = Field(gt=0)
    l2_bytes_per_cycle_per_core: float = Field(gt=0)
    has_fixpipe: bool
    nd2nz_on_the_fly: bool
    supported_dtypes: tuple[DType, ...]
    cube_macs_per_cycle: dict[DType, int]
    ub_bank_groups: int = Field(ge=1)
    ub_banks_per_group: int = Field(ge=1)
    ub_bank_rows: int = Field(ge=1)
    ub_block_bytes: int = Field(ge=1)
    bank_stride_bytes: int = Field(ge=1)
    # Model constants (per family, fitted or assumed; see
    # simcore/hardware/data/model_constants.json).
    gm_to_l1_latency_cycles: float = Field(ge=0)
    gm_to_l1_peak_bytes_per_cycle: float = Field(gt=0)
    nd2nz_latency_cycles: float = Field(ge=0)
    nd2nz_peak_bytes_per_cycle: float = Field(gt=0)
    gm_stride_align_bytes: int = Field(ge=1)
    misaligned_stride_efficiency: float = Field(gt=0, le=1)
    gm_to_ub_latency_cycles: float = Field(ge=0)
    gm_to_ub_peak_bytes_per_cycle: float = Field(gt=0)
    ub_to_gm_latency_cycles: float = Field(ge=0)
    ub_to_gm_peak_bytes_per_cycle: float = Field(gt=0)
    ub_to_l1_bytes_per_cycle: float = Field(gt=0)
    l0c_to_ub_bytes_per_cycle: float = Field(gt=0)
    mte1_latency_cycles: float = Field(ge=0)
    l1_to_l0a_bytes_per_cycle: float = Field(gt=0)
    l1_to_l0b_bytes_per_cycle: float = Field(gt=0)
    mmad_overhead_cycles: float = Field(ge=0)
    fixpipe_min_cycles: float = Field(ge=0)
    fixpipe_bytes_per_cycle: float = Field(gt=0)
    vector_bytes_per_cycle: float = Field(gt=0)
    vector_issue_overhead_cycles: float = Field(ge=0)
    l2_miss_slowdown: float = Field(ge=1)
    launch_overhead_us: float = Field(ge=0)
    # Calibration against the board (model_constants.json, issue 17). The defaults are neutral
    # (a custom preset that leaves them out gets the model without these mechanisms).
    nd2nz_row_cycles: float = Field(default=0.0, ge=0)
    l2_usable_fraction: float = Field(default=1.0, gt=0, le=1)
    l2_core_port_bytes_per_cycle: float | None = Field(default=None, gt=0)
    nd2nz_l2_share: float = Field(default=1.0, gt=0, le=1)
    #: Whether a call's reads that HBM serves although L2 would hold them within the call are
    #: priced at the miss rate (the refetch term, simcore.pipeline.traffic.call_refetch).
    l2_refetch: bool = False
    same_address_coeff: float = Field(default=0.0, ge=0)
    same_address_max_sharers: int = Field(default=1, ge=1)
    scalar_startup_cycles: float = Field(default=0.0, ge=0)
    #: Whether the start-up runs before the first issue (seed 004) rather than overlapping the
    #: other pipes (simcore.pipeline.scalar.startup_cycles).
    scalar_startup_serial: bool = False
    scalar_step_cycles: float = Field(default=0.0, ge=0)
    scalar_norm_copy_cycles: float = Field(default=0.0, ge=0)
    scalar_mdl_copy_cycles: float = Field(default=0.0, ge=0)
    constant_tiling_scalar_factor: float = Field(default=1.0, gt=0, le=1)
    device_startup_us: float = Field(default=0.0, ge=0)
    mmad_restart_cycles: float = Field(default=0.0, ge=0)
    host_dispatch_floor_us: float = Field(default=0.0, ge=0)
    #: Row-request factor of on-the-fly ND->NZ copies by GM row alignment (bytes -> factor,
    #: :func:`simcore.pipeline.alignment.stride_row_factor`); empty = every pitch costs 1.
    nd2nz_stride_row_factors: dict[int, float] = Field(default_factory=dict)
    sources: dict[str, str] = Field(default_factory=dict, exclude=True, repr=False)

    @model_validator(mode="after")
    def _check_consistency(self) -> HardwarePreset:
        missing = [d for d in self.supported_dtypes if d not in self.cube_macs_per_cycle]
        if missing:
            raise ValueError(f"cube_macs_per_cycle has no rate for supported dtypes {missing}")
        return self

    @property
    def clock_hz(self) -> float:
        """Cube clock in Hz."""
        return self.clock_mhz * 1e6

    @property
    def hbm_bytes_per_cycle(self) -> float:
        """Chip-level HBM bandwidth in bytes per cube cycle (ini ddr_rate x cores, caveat 7)."""
        return self.hbm_bytes_per_cycle_per_core * self.cube_core_count

    @property
    def l2_bytes_per_cycle(self) -> float:
        """Chip-level L2 read bandwidth in bytes per cube cycle (ini l2_read_rate x cores)."""
        return self.l2_bytes_per_cycle_per_core * self.cube_core_count

    @property
    def l2_core_port(self) -> float:
        """One core's own L2 read port in bytes per cycle (the chip share when not given)."""
        port = self.l2_core_port_bytes_per_cycle
        return self.l2_bytes_per_cycle_per_core if port is None else port

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical JSON of every value (sources excluded): its identity."""
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()

    def cycles_to_us(self, cycles: float) -> float:
        """Converts cube cycles to microseconds at this chip's clock."""
        return cycles / self.clock_mhz


def _read_packaged(soc: str) -> dict[str, Any]:
    path = resources.files(_PRESET_PACKAGE).joinpath(f"{soc}.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@cache
def list_socs() -> tuple[str, ...]:
    """Returns the names of every packaged preset, sorted."""
    names = [
        p.name.removesuffix(".json")
        for p in resources.files(_PRESET_PACKAGE).iterdir()
        if p.name.endswith(".json")
    ]
    return tuple(sorted(names))


@cache
def load_preset(soc: str) -> HardwarePreset:
    """Loads a packaged preset by SoC name (for example ``Ascend910B2``).

    Raises:
        UnknownSocError: No packaged preset has that name.
    """
    if soc not in list_socs():
        raise UnknownSocError(soc, list(list_socs()))
    data = _read_packaged(soc)
    fields = data["fields"]
    values = {k: v["value"] for k, v in fields.items()}
    sources = {k: v["source"] for k, v in fields.items()}
    return HardwarePreset(**values, sources=sources)


def custom_preset(spec: dict[str, Any]) -> HardwarePreset:
    """Builds a user's preset from a dict, optionally on top of a packaged one.

    Args:
        spec: Field values of :class:`HardwarePreset`; a ``base`` key names a packaged preset
            whose values fill every field the spec leaves out.

    Returns:
        The validated preset; its ``sources`` say which fields the user set.

    Raises:
        InputError: A field is unknown, missing or out of range.
        UnknownSocError: ``base`` names no packaged preset.
    """
    spec = dict(spec)
    base_name = spec.pop("base", None)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if base_name is not None:
        base = load_preset(str(base_name))
        values = base.model_dump()
        sources = dict(base.sources)
    values.update(spec)
    for key in spec:
        sources[key] = "user"
    try:
        return HardwarePreset(**values, sources=sources)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "preset"
        raise InputError(
            field, "preset_field", f"preset field {field}: {err['msg']}", err.get("input")
        ) from exc
