"""The models of the hardware routes: the presets (``/v1/hardware``) and the UB bank analyser.

A preset is listed with the digest that keys the cache and shown with the source of every value;
the analyser takes one vector instruction on UB operands, as ``tiler ub-analyze`` does, and
answers the blocks it touches, their bank conflicts and its cycles.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from app.schemas import OpenSection
from simcore.hardware.presets import HardwarePreset


class HardwareSummary(BaseModel):
    """A hardware preset in the listing."""

    soc: str
    digest: str = Field(description="SHA-256 of the preset's values (part of the cache key).")
    cube_core_count: int
    clock_mhz: float
    dtypes: list[str]


class HardwareDetail(BaseModel):
    """A hardware preset with the source of every value."""

    soc: str
    digest: str
    values: HardwarePreset
    sources: dict[str, str] = Field(
        description="Field -> where its value comes from.",
        examples=[{"l1_bytes": "ascend_soc_params.csv (Ascend910B2)"}],
    )


#: A UB address, stride, repeat or mask word: a non-negative integer or its text (``"0x1FE00"``).
UbNumber = (
    Annotated[int, Field(ge=0, strict=True)]
    | Annotated[
        str, Field(pattern=r"^\s*(0[xX][0-9a-fA-F]+|[0-9]+)\s*$", max_length=24, strict=True)
    ]
)


class UbAnalyzeBody(BaseModel):
    """A vector instruction on UB operands (the keys of ``tiler ub-analyze``).

    Addresses are UB byte offsets (integers or hex strings such as ``"0x1FE00"``), strides are in
    32 B blocks, ``mask`` is a lane count (continuous mode) or two 64-bit words (bit mode).
    """

    model_config = ConfigDict(extra="forbid")

    soc: str = Field(default="Ascend910B2", min_length=1, max_length=64)
    op: str = Field(min_length=1, max_length=32, description="Vector op, e.g. `add`, `exp`.")
    dtype: str = Field(default="fp16", min_length=1, max_length=16)
    dst: UbNumber
    src0: UbNumber
    src1: UbNumber | None = None
    repeat: UbNumber = 1
    dst_blk_stride: UbNumber = 1
    src0_blk_stride: UbNumber = 1
    src1_blk_stride: UbNumber = 1
    dst_rep_stride: UbNumber = 8
    src0_rep_stride: UbNumber = 8
    src1_rep_stride: UbNumber = 8
    mask: UbNumber | list[UbNumber] | None = None

    def to_request(self) -> dict[str, Any]:
        """The instruction as ``simcore.ub.vector.parse_vector_instruction`` takes it."""
        return self.model_dump(exclude_none=True)


class UbInstruction(OpenSection):
    """A vector instruction with every default filled in."""

    soc: str
    op: str
    dtype: str
    dst: int
    src0: int
    src1: int | None = None
    repeat: int
    mask: int | list[int]


class UbBlock(OpenSection):
    """A 32 B block an operand touches in the first repeat, and its UB bank."""

    operand: str
    index: int
    addr: int
    bank: int
    bank_group: int


class UbBlockRef(OpenSection):
    """A block of an operand, by its index in the first repeat."""

    operand: str
    index: int


class UbConflict(OpenSection):
    """Two accesses in one bank group at once."""

    kind: str = Field(description="`read_write`, `write_write` or `read_read`.")
    operands: list[str]
    blocks: list[UbBlockRef]


class UbAnalyzeResponse(BaseModel):
    """Blocks, bank conflicts and cycles of a vector instruction."""

    instruction: UbInstruction
    blocks: list[UbBlock]
    conflicts: list[UbConflict]
    cycles_per_repeat: float
    cycles: float
