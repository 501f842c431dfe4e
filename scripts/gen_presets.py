"""Generate simcore/hardware/data/presets/<SoC>.json from the reference CSV and the model constants.

Each field of a preset file is {"value": ..., "source": ...}. Hardware facts come from
../shared/reference/ascend_soc_params.csv (CANN platform ini files) with the conflicts resolved as
ascend_soc_params.md says; model constants come from simcore/hardware/data/model_constants.json (per NPU
architecture family). Rerun after a change to either:

    uv run python -m scripts.gen_presets
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REF = Path(os.environ.get("TILER_REFERENCE_DIR", ROOT.parent / "shared" / "reference"))
OUT = ROOT / "simcore" / "hardware" / "data" / "presets"
CSV_SRC = "ascend_soc_params.csv"

FAMILY_DTYPES: dict[str, tuple[list[str], str]] = {
    "2201": (
        ["fp16", "bf16", "fp32", "hf32", "int8"],
        "ascend-notes.md §2.1: 910B2 Intrinsic_mmad lists f16, int8, f32 and h32; bf16 is measured "
        "(measured_gemm_910b2_torch_mm.csv); no int4 on 910B (issue 2)",
    ),
    "2002": (
        ["fp16", "int8", "int4"],
        "ascend-notes.md §2.1: 310P3 Intrinsic_mmad lists int4 (s32s4s4) but no fp32; bf16 is not "
        "listed for 310P (assumption: no bf16 cube)",
    ),
    "1001": (
        ["fp16", "int8"],
        "no fp32 cube on arch 1001 (ascend-notes.md §2.2); bf16 unsupported on 910ProA (ascend-notes.md "
        "§4.1: 1.11 TFLOPS); int8 from [DtypeMKN] (assumption)",
    ),
    "3002": (
        ["fp16", "int8"],
        "assumption: [DtypeMKN] fp16 and int8 (ascend_soc_params.md); no independent source for 310B",
    ),
}

# Arch 3510 (Ascend 950): ../shared/reference/ascend950.md, "Data types" (Mmad, MmadMx); int4 and
# 4:2 sparsity are gone.
FAMILY_DTYPES["3510"] = (
    ["fp16", "bf16", "fp32", "hf32", "int8", "fp8_e4m3", "fp8_e5m2", "hif8",
     "mxfp8_e4m3", "mxfp8_e5m2", "mxfp4_e2m1", "mxfp4_e1m2"],
    "ascend950.md Data types: Mmad int8, fp16, bf16, fp32 (HF32), every fp8 e4m3/e5m2 pair, "
    "HiF8; MmadMx fp4 (e2m1, e1m2) and fp8 with e8m0 scales; int4 gone (the cube has no s4); "
    "the spec and API pages over the ini's older mmad list (Conflicts)",
)  # fmt: skip

CUBE_MACS = {
    "fp16": 4096,
    "bf16": 4096,
    "int8": 8192,
    "int4": 16384,
    "fp32": 1024,
    "hf32": 2048,
}
CUBE_MACS_SRC = (
    "ascend_soc_params.md conflict 5 (asc-devkit Cube theoretical performance table 1): half/bf16 "
    "16x16x16, int8 16x16x32, int4 16x16x64, float 16x16x4 (a quarter of fp16), HF32 16x16x8 (half)"
)


#: MACs per cycle on arch 3510: the ini's [DtypeMKN] cube shapes (ascend950.md): fp16/bf16
#: 16x16x16, fp8/HiF8/int8 16x32x16, fp4 16x64x16, fp32 16x8x16, HF32 twice fp32.
CUBE_MACS_3510 = {
    "fp16": 4096, "bf16": 4096, "fp32": 2048, "hf32": 4096, "int8": 8192,
    "fp8_e4m3": 8192, "fp8_e5m2": 8192, "hif8": 8192, "mxfp8_e4m3": 8192, "mxfp8_e5m2": 8192,
    "mxfp4_e2m1": 16384, "mxfp4_e1m2": 16384,
}  # fmt: skip
CUBE_MACS_3510_SRC = (
    "ascend950.md Per core, cube shape per cycle from the ini's [DtypeMKN]: fp16/bf16 16x16x16, "
    "fp8 (e4m3, e5m2), HiF8 and int8 16x32x16, fp4 16x64x16, fp32 16x8x16, HF32 twice fp32; MX "
    "fp8 at the fp8 shape (derived peaks 432 / 865 / 1730 TFLOPS on 32 cores at 1.65 GHz)"
)

A950 = "ascend950.md"
#: The 950 SKUs of ascend950.md "Per SKU": (soc, cube cores, vector cores, MHz, HBM GiB, ddr_rate).
SKUS_950: tuple[tuple[str, int, int, float, int, int], ...] = (
    ("Ascend950PR_9599", 36, 72, 1800.0, 128, 31),
    ("Ascend950PR_9589", 32, 64, 1650.0, 128, 31),
    ("Ascend950PR_9579", 28, 56, 1650.0, 128, 31),
    ("Ascend950DT_9591", 36, 72, 1800.0, 144, 80),
    ("Ascend950DT_9581", 32, 64, 1650.0, 144, 80),
    ("Ascend950DT_9571", 28, 56, 1650.0, 144, 80),
)
#: The default names: the arch-3510 toolchain's default SoC (PR) and the same top bin for DT.
ALIASES_950 = {
    "Ascend950PR": (
        "Ascend950PR_9599",
        "ascend950.md: the default SoC of the arch-3510 toolchain is Ascend950PR_9599",
    ),
    "Ascend950DT": (
        "Ascend950DT_9591",
        "assumption: the DT bin matching the toolchain's default PR (36 cores, 1800 MHz), "
        "ascend950.md Per SKU",
    ),
}


def fact(value: Any, column: str, note: str = "") -> dict[str, Any]:
    src = f"{CSV_SRC} {column}"
    return {"value": value, "source": src + (f" ({note})" if note else "")}


def family_constants(family: str, row: dict[str, str]) -> dict[str, Any]:
    table = json.loads(
        (ROOT / "simcore" / "hardware" / "data" / "model_constants.json").read_text()
    )
    chain = []
    fam = family
    while True:
        entry = table[fam]
        chain.append(entry)
        if "_same_as" not in entry:
            break
        fam = entry["_same_as"]
    merged: dict[str, Any] = {}
    for entry in reversed(chain):
        merged.update({k: v for k, v in entry.items() if not k.startswith("_")})
    out: dict[str, Any] = {}
    for key, spec in merged.items():
        if "ini" in spec:
            out[key] = {"value": float(row[spec["ini"]]), "source": spec["source"]}
        else:
            out[key] = dict(spec)
    # A family that borrows another's constants says so in each borrowed source ("3510").
    note = chain[0].get("_inherited_note")
    if note:
        for key in out.keys() - chain[0].keys():
            out[key]["source"] = note.format(source=out[key]["source"])
    return out


def preset(row: dict[str, str]) -> dict[str, Any]:
    arch = row["npu_arch"]
    cores = int(row["ai_core_cnt"])
    core_note = ""
    if row["soc"] == "Ascend910B1":
        core_note = (
            "ascend_soc_params.md conflict 2: the ini's 24 usable cube cores, not msKPP's 25"
        )
    dtypes, dtypes_src = FAMILY_DTYPES[arch]
    ub = int(row["ub_bytes"])
    fields: dict[str, Any] = {
        "soc": {"value": row["soc"], "source": f"{CSV_SRC} soc"},
        "npu_arch": fact(int(arch), "npu_arch"),
        "short_soc_version": fact(row["short_soc_version"], "short_soc_version"),
        "cube_core_count": fact(cores, "ai_core_cnt", core_note),
        "vector_core_count": fact(int(row["vector_core_cnt"] or 0), "vector_core_cnt"),
        "clock_mhz": fact(float(row["cube_freq_mhz"]), "cube_freq_mhz"),
        "l0a_bytes": fact(int(row["l0a_bytes"]), "l0a_bytes"),
        "l0b_bytes": fact(int(row["l0b_bytes"]), "l0b_bytes"),
        "l0c_bytes": fact(int(row["l0c_bytes"]), "l0c_bytes"),
        "l1_bytes": fact(
            int(row["l1_bytes"]),
            "l1_bytes",
            "raw size; CANN's own tilings fill it exactly (cann_default_tilings.csv shareL1Size 524288)",
        ),
        "ub_bytes": fact(ub, "ub_bytes"),
        "bt_bytes": fact(
            int(row["bt_bytes"] or 0), "bt_bytes", "0 where the chip has no BiasTable"
        ),
        "fb_bytes": fact(int(row["fb_bytes"] or 0), "fb_bytes"),
        "l2_bytes": fact(int(row["l2_bytes"]), "l2_bytes"),
        "hbm_bytes": fact(
            int(row["memory_bytes"]) if row["memory_bytes"] else None, "memory_bytes"
        ),
        "hbm_bytes_per_cycle_per_core": fact(
            float(row["ddr_rate_bytes_per_cycle"]),
            "ddr_rate_bytes_per_cycle",
            "per core; the chip's HBM bandwidth is this times the core count (ascend_soc_params.md caveat 7)",
        ),
        "l2_bytes_per_cycle_per_core": fact(
            float(row["l2_read_rate"]), "l2_read_rate", "per core; chip L2 bandwidth = this x cores"
        ),
        "has_fixpipe": fact(row["support_fixpipe"] == "1", "support_fixpipe"),
        "nd2nz_on_the_fly": {
            "value": arch == "2201",
            "source": "ascend-notes.md §5: Intrinsic_data_move_out2l1_nd2nz only on arch 2201; 310P/910A/310B "
            "convert ND inputs through UB",
        },
        "supported_dtypes": {"value": dtypes, "source": dtypes_src},
        "cube_macs_per_cycle": {
            "value": {d: CUBE_MACS[d] for d in dtypes},
            "source": CUBE_MACS_SRC,
        },
        "ub_bank_groups": {"value": 16, "source": "seed 000: 16 bank groups"},
        "ub_banks_per_group": {
            "value": max(1, ub // (16 * 128 * 32)),
            "source": "seed 000: 192 KiB = 16 groups x 3 banks x 128 rows x 32 B; banks per group = ub_bytes / (16 x 128 x 32)",
        },
        "ub_bank_rows": {"value": 128, "source": "seed 000: bank_depth = 128 rows"},
        "ub_block_bytes": {"value": 32, "source": "seed 000: one bank row is C0 = 32 B"},
        "bank_stride_bytes": {
            "value": 65536,
            "source": "seeds/README.md: bank_in_group = (addr / 65536) mod banks_per_group (reproduces seed 000)",
        },
    }
    fields.update(family_constants(arch, row))
    return {
        "soc": row["soc"],
        "provenance": {k: row[k] for k in ("source_repo", "source_path", "source_commit")},
        "fields": fields,
    }


def _src(value: Any, source: str) -> dict[str, Any]:
    return {"value": value, "source": source}


def preset_950(
    sku: tuple[str, int, int, float, int, int], name: str = "", alias: str = ""
) -> dict[str, Any]:
    """The preset of one Ascend 950 SKU from ascend950.md (every value with its source)."""
    soc, cores, vec, mhz, hbm_gib, ddr = sku
    per_sku = f"{A950} Per SKU ({soc})"
    per_core = f"{A950} Per core (the same in every 950 file)"
    dtypes, dtypes_src = FAMILY_DTYPES["3510"]
    fields: dict[str, Any] = {
        "soc": _src(name or soc, alias or per_sku),
        "npu_arch": _src(3510, f"{A950} title: NPU arch 3510"),
        "short_soc_version": _src(
            soc.split("_")[0], "assumption: the ini file name's prefix (Ascend950PR_*.ini)"
        ),
        "cube_core_count": _src(cores, per_sku + " cube cores"),
        "vector_core_count": _src(vec, per_sku + " vector cores"),
        "clock_mhz": _src(mhz, per_sku + " clock MHz"),
        "l0a_bytes": _src(65536, per_core + ": L0A 64 KiB (ini, spec, catlass)"),
        "l0b_bytes": _src(65536, per_core + ": L0B 64 KiB (ini, spec, catlass)"),
        "l0c_bytes": _src(262144, per_core + ": L0C 256 KiB (ini, spec, catlass)"),
        "l1_bytes": _src(524288, per_core + ": L1 512 KiB (ini, spec, catlass)"),
        "ub_bytes": _src(253952, per_core + ": UB 248 KiB usable of 256 KiB physical (ini, spec)"),
        "bt_bytes": _src(4096, per_core + ": BiasTable 4 KiB (ini, spec)"),
        "fb_bytes": _src(
            4096,
            f"{A950} Conflicts: FixPipe buffer 4 KiB + 2 KiB (ini), 4 KB (spec), 16 KiB (catlass); "
            "the tiling does not use it, the spec's 4 KiB is kept",
        ),
        "l2_bytes": _src(128 * 2**20, per_sku + " L2 128 MiB"),
        "hbm_bytes": _src(hbm_gib * 2**30, per_sku + f" HBM {hbm_gib} GiB"),
        "hbm_bytes_per_cycle_per_core": _src(
            float(ddr),
            f"{A950} HBM bandwidth: the ini's ddr_rate ({ddr} B/cycle per core; x 32 cores x 1.65 GHz "
            "gives the public 1.6 TB/s PR / 4 TB/s DT figures)",
        ),
        "has_fixpipe": _src(True, per_core + ": FixPipe yes (L0C to GM, L1 and UB)"),
        "nd2nz_on_the_fly": _src(True, per_core + ": on-the-fly ND2NZ on GM to L1 (and DN2NZ)"),
        "supported_dtypes": _src(dtypes, dtypes_src),
        "cube_macs_per_cycle": _src({d: CUBE_MACS_3510[d] for d in dtypes}, CUBE_MACS_3510_SRC),
        "ub_bank_groups": _src(8, f"{A950} UB banks: 8 bank groups of 2 banks of 16 KiB (change)"),
        "ub_banks_per_group": _src(2, f"{A950} UB banks: 2 banks per group (change)"),
        "ub_bank_rows": _src(512, f"derived: a 16 KiB bank ({A950}) is 512 rows of one 32 B block"),
        "ub_block_bytes": _src(
            32, "seed 000: one bank row is one 32 B datablock (unchanged on 950)"
        ),
        "bank_stride_bytes": _src(
            131072,
            "assumption: seed 000's mapping generalized (consecutive 32 B blocks rotate over the "
            "8 groups; each 8 x 16 KiB = 128 KiB is one bank of every group), docs/ascend950.md",
        ),
    }
    row = {"soc": soc}
    fields.update(family_constants("3510", row))
    out: dict[str, Any] = {
        "soc": name or soc,
        "provenance": {
            "source_repo": "hicann/runtime",
            "source_path": f"src/platform/platform_config/cann-dev/{soc}.ini (via {A950})",
            "source_commit": "681ef76",
        },
        "fields": fields,
    }
    if name:
        out["alias_of"] = soc
    return out


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with (REF / CSV_SRC).open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    written: list[tuple[str, dict[str, Any]]] = [(row["soc"], preset(row)) for row in rows]
    written += [(sku[0], preset_950(sku)) for sku in SKUS_950]
    by_name = {sku[0]: sku for sku in SKUS_950}
    written += [
        (name, preset_950(by_name[target], name=name, alias=f"alias of {target}: {why}"))
        for name, (target, why) in ALIASES_950.items()
    ]
    for soc, data in written:
        path = OUT / f"{soc}.json"
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {len(written)} presets to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
