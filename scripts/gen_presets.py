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


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with (REF / CSV_SRC).open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        path = OUT / f"{row['soc']}.json"
        path.write_text(json.dumps(preset(row), indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} presets to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
