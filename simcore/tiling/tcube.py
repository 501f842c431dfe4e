"""The TCubeTiling struct, field for field, in the order of ``optiling::TCubeTiling``.

Seed 002 table 1 documents the fields a kernel author tunes; the struct in CANN's
``include/adv_api/matmul/matmul_tilingdata.h`` (asc-devkit) has them in this order together with
fields the seed calls reserved or does not list (L1-cache-in-UB depths, batch layout info). All
are int32. Every field keeps its exact struct name at every boundary (JSON, C++ export, binary).
"""

from __future__ import annotations

import struct
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simcore.errors import InputError, input_error_from
from simcore.tiling.problem import INT32_MAX

INT32_MIN = -(2**31)

#: Every field of optiling::TCubeTiling, in declaration order (the binary layout).
FIELD_ORDER: tuple[str, ...] = (
    "usedCoreNum", "M", "N", "Ka", "Kb", "singleCoreM", "singleCoreN", "singleCoreK",
    "baseM", "baseN", "baseK", "depthA1", "depthB1", "stepM", "stepN", "isBias",
    "transLength", "iterateOrder", "shareMode", "shareL1Size", "shareL0CSize", "shareUbSize",
    "batchM", "batchN", "singleBatchM", "singleBatchN", "stepKa", "stepKb",
    "depthAL1CacheUB", "depthBL1CacheUB", "dbL0A", "dbL0B", "dbL0C",
    "ALayoutInfoB", "ALayoutInfoS", "ALayoutInfoN", "ALayoutInfoG", "ALayoutInfoD",
    "BLayoutInfoB", "BLayoutInfoS", "BLayoutInfoN", "BLayoutInfoG", "BLayoutInfoD",
    "CLayoutInfoB", "CLayoutInfoS1", "CLayoutInfoN", "CLayoutInfoG", "CLayoutInfoS2",
    "BatchNum", "mxTypePara",
)  # fmt: skip

#: The fields seed 002 table 1 documents.
SEED_FIELDS: tuple[str, ...] = (
    "usedCoreNum", "M", "N", "Ka", "Kb", "singleCoreM", "singleCoreN", "singleCoreK",
    "baseM", "baseN", "baseK", "depthA1", "depthB1", "stepM", "stepN", "stepKa", "stepKb",
    "isBias", "transLength", "iterateOrder", "dbL0A", "dbL0B", "dbL0C", "shareMode",
    "shareL1Size", "shareL0CSize", "shareUbSize", "batchM", "batchN", "singleBatchM",
    "singleBatchN",
)  # fmt: skip

#: Fields a caller must give; the search chooses exactly these.
REQUIRED_FIELDS: tuple[str, ...] = (
    "usedCoreNum", "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK",
    "depthA1", "depthB1", "stepM", "stepN", "stepKa", "stepKb",
)  # fmt: skip

#: Fields derived from the others when the caller leaves them out.
DERIVED_FIELDS: tuple[str, ...] = ("transLength", "shareL1Size", "shareL0CSize", "shareUbSize")

_I32 = Field(ge=INT32_MIN, le=INT32_MAX, strict=True)


class TCubeTiling(BaseModel):
    """A complete TCubeTiling. Values are stored as given; legality is checked separately.

    Defaults (used when a JSON tiling leaves a key out): ``M``, ``N``, ``Ka``, ``Kb``,
    ``singleCoreK`` and ``isBias`` come from the problem; ``iterateOrder`` 0; ``dbL0A`` and
    ``dbL0B`` 2; ``dbL0C`` 1; ``transLength``, ``shareL1Size``, ``shareL0CSize`` and
    ``shareUbSize`` are derived as the struct documents them (see :mod:`simcore.tiling.footprints`);
    every other field 0.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    usedCoreNum: int = _I32
    M: int = _I32
    N: int = _I32
    Ka: int = _I32
    Kb: int = _I32
    singleCoreM: int = _I32
    singleCoreN: int = _I32
    singleCoreK: int = _I32
    baseM: int = _I32
    baseN: int = _I32
    baseK: int = _I32
    depthA1: int = _I32
    depthB1: int = _I32
    stepM: int = _I32
    stepN: int = _I32
    isBias: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    transLength: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    iterateOrder: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    shareMode: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    shareL1Size: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    shareL0CSize: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    shareUbSize: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    batchM: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    batchN: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    singleBatchM: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    singleBatchN: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    stepKa: int = _I32
    stepKb: int = _I32
    depthAL1CacheUB: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    depthBL1CacheUB: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    dbL0A: int = Field(default=2, ge=INT32_MIN, le=INT32_MAX, strict=True)
    dbL0B: int = Field(default=2, ge=INT32_MIN, le=INT32_MAX, strict=True)
    dbL0C: int = Field(default=1, ge=INT32_MIN, le=INT32_MAX, strict=True)
    ALayoutInfoB: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    ALayoutInfoS: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    ALayoutInfoN: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    ALayoutInfoG: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    ALayoutInfoD: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    BLayoutInfoB: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    BLayoutInfoS: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    BLayoutInfoN: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    BLayoutInfoG: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    BLayoutInfoD: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    CLayoutInfoB: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    CLayoutInfoS1: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    CLayoutInfoN: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    CLayoutInfoG: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    CLayoutInfoS2: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    BatchNum: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)
    mxTypePara: int = Field(default=0, ge=INT32_MIN, le=INT32_MAX, strict=True)

    def to_dict(self) -> dict[str, int]:
        """Returns every struct field by name, in struct order."""
        return {name: int(getattr(self, name)) for name in FIELD_ORDER}

    def to_bytes(self) -> bytes:
        """Returns the struct as raw little-endian int32 values in declaration order."""
        return struct.pack(f"<{len(FIELD_ORDER)}i", *(getattr(self, f) for f in FIELD_ORDER))

    @classmethod
    def from_bytes(cls, raw: bytes) -> TCubeTiling:
        """Parses the raw little-endian int32 struct written by :meth:`to_bytes`."""
        values = struct.unpack(f"<{len(FIELD_ORDER)}i", raw)
        return cls(**dict(zip(FIELD_ORDER, values, strict=True)))


def parse_tiling_fields(data: Any) -> dict[str, int]:
    """Checks a JSON tiling's keys and value types without filling defaults.

    Raises:
        InputError: A key is not a struct field, a value is not an int32 integer, or a required
            field is missing.
    """
    if not isinstance(data, dict):
        raise InputError("tiling", "type", "tiling must be a JSON object", type(data).__name__)
    for key, value in data.items():
        if key not in FIELD_ORDER:
            raise InputError(
                f"tiling.{key}",
                "unknown_field",
                f"tiling.{key} is not a TCubeTiling field",
                key,
                "one of the struct's field names",
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(
                f"tiling.{key}", "int_type", f"tiling.{key} must be an integer", value, "int32"
            )
        if not INT32_MIN <= value <= INT32_MAX:
            raise InputError(
                f"tiling.{key}",
                "int32_range",
                f"tiling.{key} = {value} does not fit the struct's int32",
                value,
                f"[{INT32_MIN}, {INT32_MAX}]",
            )
    for key in REQUIRED_FIELDS:
        if key not in data:
            raise InputError(f"tiling.{key}", "required", f"tiling.{key} is required", None, None)
    return dict(data)


def build_tiling(fields: dict[str, int]) -> TCubeTiling:
    """Builds a :class:`TCubeTiling` from complete fields, mapping pydantic errors to InputError."""
    try:
        return TCubeTiling(**fields)
    except ValidationError as exc:
        raise input_error_from(exc, prefix="tiling") from exc
