"""Vector instructions on the Unified Buffer: validation, bank conflicts and cycles.

Sources:
    Seed 001 (instruction semantics): each repeat (iteration) reads and writes 8 datablocks of
    32 B; ``repeat`` is at most 255; the block stride is the distance between the blocks of one
    repeat and the repeat stride the distance between the same block of consecutive repeats, both
    in 32 B blocks; the mask selects lanes in continuous mode (the first ``mask`` elements,
    ``mask`` in [1, 256 / sizeof]) or bit mode (two uint64 words; for 16-bit types neither word is
    constrained but both cannot be 0; for 32-bit types word 1 must be 0 and word 0 non-zero).
    Seed 000 (bank conflicts and their cost): :mod:`simcore.ub.banks`.
    The stride ranges follow Ascend C's ``BinaryRepeatParams`` (every stride uint8) and
    ``UnaryRepeatParams`` (block strides uint16, repeat strides uint8).

Decisions where the seeds are silent:
    * The mask does not change which blocks are addressed: every repeat touches its 8 blocks per
      operand whatever the mask (seed 001 defines block addresses from the strides alone). Bank
      conflicts and the UB range check therefore count masked-off blocks; this is conservative
      when a short continuous mask leaves whole blocks idle.
    * ``src1`` is required by the two-source ops and rejected (not ignored) for one-source ops, as
      are ``src1_blk_stride``/``src1_rep_stride``: a silently ignored operand hides a mistake.
    * Addresses must be 32 B aligned (a UB operand starts on a block) and every block of every
      repeat must lie inside the preset's UB.
    * Only 16- and 32-bit element types, the two widths seed 001 defines masks for.
    * ``analyze`` reports the blocks and conflicts of the first repeat; ``cycles`` sums every
      repeat, because a repeat stride that differs between operands (or a 64 KiB bank boundary)
      can change the cross-operand conflicts from one repeat to the next. Same-operand conflicts
      never change: shifting every block of an operand by one repeat stride shifts all their bank
      groups alike.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from simcore.errors import InputError, input_error_from
from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.ub.banks import (
    BLOCK_BYTES,
    BLOCKS_PER_REPEAT,
    analyze_repeat,
)

#: Bytes one repeat covers per operand: 8 blocks x 32 B (seed 001).
REPEAT_BYTES = BLOCKS_PER_REPEAT * BLOCK_BYTES
#: Largest repeat count of one instruction (seed 001: "Repeat times不能超过255").
MAX_REPEAT = 255
UINT8_MAX = 2**8 - 1
UINT16_MAX = 2**16 - 1
UINT64_MAX = 2**64 - 1


class VectorOp(StrEnum):
    """Vector operations. Two-source ops read ``src0`` and ``src1``; the others read ``src0``."""

    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    MAX = "max"
    MIN = "min"
    AND = "and"
    OR = "or"
    ADDS = "adds"
    MULS = "muls"
    MAXS = "maxs"
    MINS = "mins"
    EXP = "exp"
    LN = "ln"
    ABS = "abs"
    RECIPROCAL = "reciprocal"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    RELU = "relu"
    NOT = "not"
    COPY = "copy"


BINARY_OPS: frozenset[VectorOp] = frozenset(
    {
        VectorOp.ADD,
        VectorOp.SUB,
        VectorOp.MUL,
        VectorOp.DIV,
        VectorOp.MAX,
        VectorOp.MIN,
        VectorOp.AND,
        VectorOp.OR,
    }
)


class VectorDType(StrEnum):
    """Element types of a vector instruction (16- and 32-bit, as seed 001's masks)."""

    FP16 = "fp16"
    FP32 = "fp32"
    INT16 = "int16"
    UINT16 = "uint16"
    INT32 = "int32"
    UINT32 = "uint32"


_DTYPE_BITS: dict[VectorDType, int] = {
    VectorDType.FP16: 16,
    VectorDType.INT16: 16,
    VectorDType.UINT16: 16,
    VectorDType.FP32: 32,
    VectorDType.INT32: 32,
    VectorDType.UINT32: 32,
}
_FLOAT_DTYPES = frozenset({VectorDType.FP16, VectorDType.FP32})
#: Ops Ascend C defines on half/float only.
_FLOAT_ONLY_OPS = frozenset(
    {
        VectorOp.DIV,
        VectorOp.EXP,
        VectorOp.LN,
        VectorOp.RECIPROCAL,
        VectorOp.SQRT,
        VectorOp.RSQRT,
    }
)
#: Bitwise ops Ascend C defines on int16/uint16 only.
_BITWISE_OPS = frozenset({VectorOp.AND, VectorOp.OR, VectorOp.NOT})
_BITWISE_DTYPES = frozenset({VectorDType.INT16, VectorDType.UINT16})

_ADDRESS_FIELDS = ("dst", "src0", "src1")
_SRC1_FIELDS = ("src1", "src1_blk_stride", "src1_rep_stride")


def dtype_bits(dtype: VectorDType) -> int:
    """Returns the element width of ``dtype`` in bits."""
    return _DTYPE_BITS[dtype]


def lanes_per_repeat(dtype: VectorDType) -> int:
    """Elements one repeat processes: 256 B / sizeof(dtype) (128 for fp16, 64 for fp32)."""
    return REPEAT_BYTES * 8 // _DTYPE_BITS[dtype]


def _error(rule: str, message: str, field: str, limit: Any = None) -> PydanticCustomError:
    # The field rides in the context so that errors raised by the model validator (whose
    # location is empty) still name the field in the InputError.
    ctx: dict[str, Any] = {"field": field}
    if limit is not None:
        ctx["limit"] = limit
    return PydanticCustomError(rule, message, ctx)


def _parse_uint(value: Any, field: str, rule: str) -> int:
    """Accepts an int or a string in any base Python reads (``"0x1FE00"``, ``"130560"``)."""
    if isinstance(value, bool):
        raise _error(rule, f"{field} must be an integer, not a boolean", field)
    if isinstance(value, str):
        try:
            value = int(value.strip(), 0)
        except ValueError:
            raise _error(
                rule, f"{field} must be an integer or a hex string like '0x1FE00'", field
            ) from None
    if not isinstance(value, int):
        raise _error(rule, f"{field} must be an integer or a hex string like '0x1FE00'", field)
    if value < 0:
        raise _error(rule, f"{field} must not be negative", field, 0)
    return value


class VectorInstruction(BaseModel):
    """One vector instruction on UB operands (seed 001), as Ascend C's level-0 API issues it.

    Addresses are UB byte offsets (ints or hex strings); strides are in 32 B blocks. ``mask`` is
    an int (continuous mode) or two ints (bit mode); None means every lane, and validation fills
    it in as ``256 / sizeof(dtype)``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    soc: str = "Ascend910B2"
    op: VectorOp
    dtype: VectorDType = VectorDType.FP16
    dst: int
    src0: int
    src1: int | None = None
    repeat: int = 1
    dst_blk_stride: int = 1
    src0_blk_stride: int = 1
    src1_blk_stride: int = 1
    dst_rep_stride: int = 8
    src0_rep_stride: int = 8
    src1_rep_stride: int = 8
    mask: int | tuple[int, int] | None = None

    @field_validator("dst", "src0", "src1", mode="before")
    @classmethod
    def _address(cls, value: Any, info: ValidationInfo) -> int | None:
        field = str(info.field_name)
        if value is None:
            return None
        addr = _parse_uint(value, field, "ub_address")
        if addr % BLOCK_BYTES:
            raise _error(
                "ub_alignment",
                f"{field} {addr:#x} is not 32 B aligned (a UB operand starts on a block)",
                field,
                BLOCK_BYTES,
            )
        return addr

    @field_validator("repeat", mode="before")
    @classmethod
    def _repeat(cls, value: Any) -> int:
        n = _parse_uint(value, "repeat", "repeat_times")
        if not 1 <= n <= MAX_REPEAT:
            raise _error(
                "repeat_times",
                f"repeat must be in [1, {MAX_REPEAT}] (seed 001: repeat times cannot exceed "
                f"{MAX_REPEAT}); split a longer loop with split_instruction()",
                "repeat",
                [1, MAX_REPEAT],
            )
        return n

    @field_validator(
        "dst_blk_stride",
        "src0_blk_stride",
        "src1_blk_stride",
        "dst_rep_stride",
        "src0_rep_stride",
        "src1_rep_stride",
        mode="before",
    )
    @classmethod
    def _stride(cls, value: Any, info: ValidationInfo) -> int:
        field = str(info.field_name)
        rule = "blk_stride_range" if "blk" in field else "rep_stride_range"
        return _parse_uint(value, field, rule)

    @field_validator("mask", mode="before")
    @classmethod
    def _mask_shape(cls, value: Any) -> int | tuple[int, int] | None:
        if value is None:
            return None
        if isinstance(value, list | tuple):
            if len(value) != 2:
                raise _error(
                    "mask_bits_length",
                    "a bit-mode mask is two 64-bit words [mask0, mask1]",
                    "mask",
                    2,
                )
            return (
                _parse_uint(value[0], "mask", "mask_bits_range"),
                _parse_uint(value[1], "mask", "mask_bits_range"),
            )
        return _parse_uint(value, "mask", "mask_continuous_range")

    @model_validator(mode="after")
    def _check(self) -> VectorInstruction:
        self._check_op_dtype()
        self._check_operands()
        self._check_strides()
        self._check_mask()
        return self

    def _check_op_dtype(self) -> None:
        if self.op in _FLOAT_ONLY_OPS and self.dtype not in _FLOAT_DTYPES:
            raise _error(
                "op_dtype",
                f"{self.op} takes fp16 or fp32, not {self.dtype}",
                "dtype",
                sorted(_FLOAT_DTYPES),
            )
        if self.op in _BITWISE_OPS and self.dtype not in _BITWISE_DTYPES:
            raise _error(
                "op_dtype",
                f"{self.op} takes int16 or uint16, not {self.dtype}",
                "dtype",
                sorted(_BITWISE_DTYPES),
            )

    def _check_operands(self) -> None:
        if self.is_binary:
            if self.src1 is None:
                raise _error("required", f"{self.op} reads two sources: give src1", "src1")
            return
        # Defaults are accepted so that a dumped instruction validates again.
        defaults = {"src1": None, "src1_blk_stride": 1, "src1_rep_stride": 8}
        for field in _SRC1_FIELDS:
            if getattr(self, field) != defaults[field]:
                raise _error(
                    "src1_unary",
                    f"{self.op} reads one source; remove {field}",
                    field,
                )

    def _check_strides(self) -> None:
        # BinaryRepeatParams keeps every stride in a uint8; UnaryRepeatParams widens the block
        # strides to uint16 (Ascend C kernel_struct_binary.h / kernel_struct_unary.h).
        blk_max = UINT8_MAX if self.is_binary else UINT16_MAX
        for field in ("dst_blk_stride", "src0_blk_stride", "src1_blk_stride"):
            value: int = getattr(self, field)
            if value > blk_max:
                raise _error(
                    "blk_stride_range",
                    f"{field} {value} exceeds {blk_max} for a "
                    f"{'two' if self.is_binary else 'one'}-source instruction",
                    field,
                    [0, blk_max],
                )
        for field in ("dst_rep_stride", "src0_rep_stride", "src1_rep_stride"):
            value = getattr(self, field)
            if value > UINT8_MAX:
                raise _error(
                    "rep_stride_range",
                    f"{field} {value} exceeds {UINT8_MAX}",
                    field,
                    [0, UINT8_MAX],
                )

    def _check_mask(self) -> None:
        lanes = self.lanes
        mask = self.mask
        if mask is None:
            object.__setattr__(self, "mask", lanes)
            return
        if isinstance(mask, int):
            if not 1 <= mask <= lanes:
                raise _error(
                    "mask_continuous_range",
                    f"a continuous mask for {self.dtype} must be in [1, {lanes}] "
                    f"(256 / sizeof, seed 001), got {mask}",
                    "mask",
                    [1, lanes],
                )
            return
        low, high = mask
        for word in (low, high):
            if word > UINT64_MAX:
                raise _error(
                    "mask_bits_range",
                    f"a bit-mode mask word must be in [0, 2^64 - 1], got {word}",
                    "mask",
                    [0, UINT64_MAX],
                )
        if self.bits == 32 and high != 0:
            # 64 lanes need only word 0 (seed 001: "当操作数为32位时,mask[1]为0").
            raise _error(
                "mask_bits_high_word",
                f"a bit-mode mask for {self.dtype} has 64 lanes: mask[1] must be 0",
                "mask",
                0,
            )
        if low == 0 and high == 0:
            raise _error(
                "mask_bits_all_zero",
                "a bit-mode mask must select at least one lane (mask[0] and mask[1] both 0)",
                "mask",
            )

    @property
    def is_binary(self) -> bool:
        """Whether the op reads two sources (``src0`` and ``src1``)."""
        return self.op in BINARY_OPS

    @property
    def bits(self) -> int:
        """Element width in bits."""
        return _DTYPE_BITS[self.dtype]

    @property
    def lanes(self) -> int:
        """Elements of one repeat: 256 B / sizeof(dtype)."""
        return lanes_per_repeat(self.dtype)

    @property
    def active_lanes(self) -> int:
        """Elements the mask selects in each repeat."""
        mask = self.mask
        if mask is None:
            return self.lanes
        if isinstance(mask, int):
            return mask
        return mask[0].bit_count() + mask[1].bit_count()

    @property
    def elements(self) -> int:
        """Elements computed by the whole instruction: selected lanes x repeat."""
        return self.active_lanes * self.repeat

    @property
    def result_bytes(self) -> int:
        """Bytes of results: ``elements x sizeof`` (512 B for fp16, repeat 2, full mask)."""
        return self.elements * self.bits // 8

    def operand_starts(self, r: int) -> tuple[int, int, int | None]:
        """Returns the ``dst``, ``src0`` and ``src1`` addresses of repeat ``r`` (0-based)."""
        dst = self.dst + r * self.dst_rep_stride * BLOCK_BYTES
        src0 = self.src0 + r * self.src0_rep_stride * BLOCK_BYTES
        src1 = None if self.src1 is None else self.src1 + r * self.src1_rep_stride * BLOCK_BYTES
        return dst, src0, src1

    def canonical(self) -> dict[str, Any]:
        """Returns the instruction with every default filled in, as JSON-ready values."""
        return self.model_dump(mode="json")


def parse_vector_instruction(data: Any) -> VectorInstruction:
    """Validates a vector instruction from JSON-like data.

    Raises:
        InputError: A key is unknown, missing, of the wrong type or out of range; ``rule`` names
            the violated rule (``repeat_times``, ``mask_continuous_range``, ``mask_bits_all_zero``,
            ``ub_alignment``, ``unknown_field``, ...).
    """
    if not isinstance(data, dict):
        raise InputError(
            "instruction", "type", "a vector instruction must be a JSON object", type(data).__name__
        )
    try:
        return VectorInstruction.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, default_field="instruction") from exc


def check_in_ub(instr: VectorInstruction, preset: HardwarePreset) -> None:
    """Checks that every block of every repeat of every operand lies inside the UB.

    Raises:
        InputError: Rule ``ub_out_of_range``, naming the operand, its furthest byte and the UB size.
    """
    last = instr.repeat - 1
    spans = [
        ("dst", instr.dst, instr.dst_blk_stride, instr.dst_rep_stride),
        ("src0", instr.src0, instr.src0_blk_stride, instr.src0_rep_stride),
    ]
    if instr.src1 is not None:
        spans.append(("src1", instr.src1, instr.src1_blk_stride, instr.src1_rep_stride))
    for operand, start, blk, rep in spans:
        end = start + ((BLOCKS_PER_REPEAT - 1) * blk + last * rep + 1) * BLOCK_BYTES
        if end > preset.ub_bytes:
            raise InputError(
                operand,
                "ub_out_of_range",
                f"{operand} touches bytes up to {end - 1:#x}, beyond {preset.soc}'s "
                f"{preset.ub_bytes} B UB (last block of the last repeat)",
                start,
                preset.ub_bytes,
            )


def _resolve(instr: VectorInstruction, preset: HardwarePreset | None) -> HardwarePreset:
    return load_preset(instr.soc) if preset is None else preset


def instruction_cycles(instr: VectorInstruction, preset: HardwarePreset | None = None) -> float:
    """Cycles of the whole instruction: every repeat's conflict-adjusted cycles + issue overhead.

    Args:
        instr: The instruction.
        preset: The chip; None loads the packaged preset named by ``instr.soc``.

    Raises:
        InputError: A block lies outside the UB.
        UnknownSocError: ``preset`` is None and ``instr.soc`` names no packaged preset.
    """
    preset = _resolve(instr, preset)
    check_in_ub(instr, preset)
    total = 0
    for r in range(instr.repeat):
        dst, src0, src1 = instr.operand_starts(r)
        total += analyze_repeat(
            preset,
            dst,
            src0,
            src1,
            dst_blk_stride=instr.dst_blk_stride,
            src0_blk_stride=instr.src0_blk_stride,
            src1_blk_stride=instr.src1_blk_stride,
        ).cycles
    return total + preset.vector_issue_overhead_cycles


def analyze(instr: VectorInstruction, preset: HardwarePreset | None = None) -> dict[str, Any]:
    """Blocks, bank conflicts and cycles of a vector instruction.

    Args:
        instr: The instruction.
        preset: The chip; None loads the packaged preset named by ``instr.soc``.

    Returns:
        ``blocks``: the first repeat's blocks (``operand``, ``index``, ``addr``, ``bank``,
        ``bank_group``); ``conflicts``: the first repeat's conflicts (``kind``, ``operands``,
        ``blocks``); ``cycles_per_repeat``: the first repeat's cycles; ``cycles``: the whole
        instruction's (sum over repeats plus ``vector_issue_overhead_cycles``).

    Raises:
        InputError: A block lies outside the UB.
        UnknownSocError: ``preset`` is None and ``instr.soc`` names no packaged preset.
    """
    preset = _resolve(instr, preset)
    check_in_ub(instr, preset)
    first = analyze_repeat(
        preset,
        instr.dst,
        instr.src0,
        instr.src1,
        dst_blk_stride=instr.dst_blk_stride,
        src0_blk_stride=instr.src0_blk_stride,
        src1_blk_stride=instr.src1_blk_stride,
    )
    return {
        "blocks": [b.to_dict() for b in first.blocks],
        "conflicts": [c.to_dict() for c in first.conflicts],
        "cycles_per_repeat": first.cycles,
        "cycles": _json_number(instruction_cycles(instr, preset)),
    }


def _json_number(value: float) -> int | float:
    # Cycle counts are whole unless a preset's issue overhead is fractional: print 8, not 8.0.
    return int(value) if float(value).is_integer() else value


def split_repeat_counts(total_repeat: int, max_repeat: int = MAX_REPEAT) -> list[int]:
    """Splits a logical repeat count into instruction-sized ones (600 -> [255, 255, 90]).

    Raises:
        InputError: ``total_repeat`` is negative or ``max_repeat`` is not in [1, 255].
    """
    if isinstance(total_repeat, bool) or not isinstance(total_repeat, int) or total_repeat < 0:
        raise InputError(
            "total_repeat",
            "repeat_total",
            "total repeat must be a non-negative integer",
            total_repeat,
            0,
        )
    if not 1 <= max_repeat <= MAX_REPEAT:
        raise InputError(
            "max_repeat",
            "repeat_times",
            f"max_repeat must be in [1, {MAX_REPEAT}]",
            max_repeat,
            [1, MAX_REPEAT],
        )
    full, rest = divmod(total_repeat, max_repeat)
    return [max_repeat] * full + ([rest] if rest else [])


def split_instruction(template: VectorInstruction, total_repeat: int) -> list[VectorInstruction]:
    """Issues a loop of ``total_repeat`` repeats as instructions of at most 255 repeats each.

    Each chunk starts where the previous one stopped: its addresses advance by the repeats done
    times each operand's repeat stride. The template's own ``repeat`` is ignored.

    Raises:
        InputError: ``total_repeat`` is negative.
    """
    out: list[VectorInstruction] = []
    done = 0
    for count in split_repeat_counts(total_repeat):
        dst, src0, src1 = template.operand_starts(done)
        update: dict[str, Any] = {"repeat": count, "dst": dst, "src0": src0}
        if src1 is not None:
            update["src1"] = src1
        out.append(template.model_copy(update=update))
        done += count
    return out
