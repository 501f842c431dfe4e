"""The named request examples of the /v1 operations (Swagger UI's "Examples" menus).

The tune examples carry no ``budget``: a request with the server's default budget is the one the
README's ``curl`` sends, so a user who tries both gets one cached answer, not two searches.
"""

from __future__ import annotations

from typing import Any

_GEMM_4096 = {"problem": {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096, "dtype": "fp16"}}

#: The named examples of ``tilings:tune``.
TUNE_EXAMPLES: dict[str, dict[str, Any]] = {
    "gemm_910b2_fp16_4096": {"summary": "910B2 fp16 4096^3 GEMM", "value": _GEMM_4096},
    "decode_gemv_m1": {
        "summary": "Decode GEMV, M = 1 (LLaMA-7B up projection)",
        "value": {"problem": {"soc": "Ascend910B2", "m": 1, "n": 11008, "k": 4096}},
    },
    "bf16_transposed_b": {
        "summary": "bf16 with transposed B",
        "value": {
            "problem": {
                "soc": "Ascend910B2",
                "m": 2048,
                "n": 5120,
                "k": 5120,
                "dtype": "bf16",
                "trans_b": True,
            }
        },
    },
    "int8_310p3": {
        "summary": "310P3 int8",
        "value": {
            "problem": {"soc": "Ascend310P3", "m": 1024, "n": 2048, "k": 1024, "dtype": "int8"}
        },
    },
}

_GOOD_TILING = {
    "usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 768, "baseM": 128, "baseN": 256,
    "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8, "stepKb": 4,
}  # fmt: skip

#: The named examples of ``tilings:evaluate`` and ``tilings:validate``.
CHECK_EXAMPLES: dict[str, dict[str, Any]] = {
    "legal_910b2_fp16_4096": {
        "summary": "A legal tiling of the 910B2 fp16 4096^3 GEMM",
        "value": {**_GEMM_4096, "tiling": _GOOD_TILING},
    },
    "l0a_overflow": {
        "summary": "An illegal tiling: baseM 512 overflows L0A",
        "value": {**_GEMM_4096, "tiling": {**_GOOD_TILING, "baseM": 512}},
    },
}

#: The named examples of ``ub:analyze``.
UB_EXAMPLES: dict[str, dict[str, Any]] = {
    "add_conflict_free": {
        "summary": "fp16 add, operands in different bank groups",
        "value": {"op": "add", "dtype": "fp16", "dst": 0, "src0": "0x8000", "src1": "0x10000"},
    },
    "add_same_bank": {
        "summary": "fp16 add, all operands in one bank group (conflicts)",
        "value": {"op": "add", "dtype": "fp16", "dst": 0, "src0": 0, "src1": 256, "repeat": 4},
    },
}

#: The named examples of ``tuning-jobs``.
JOB_EXAMPLES: dict[str, dict[str, Any]] = {
    "llm-layer": {
        "summary": "The four GEMMs of a Llama-7B layer at 2048 tokens (910B2, fp16)",
        "value": {
            "problems": [
                {"soc": "Ascend910B2", "m": 2048, "n": 12288, "k": 4096, "dtype": "fp16"},
                {"soc": "Ascend910B2", "m": 2048, "n": 4096, "k": 4096, "dtype": "fp16"},
                {"soc": "Ascend910B2", "m": 2048, "n": 22016, "k": 4096, "dtype": "fp16"},
                {"soc": "Ascend910B2", "m": 2048, "n": 4096, "k": 11008, "dtype": "fp16"},
            ]
        },
    },
    "decode": {
        "summary": "Decode GEMVs (M = 1), screening only",
        "value": {
            "problems": [{"m": 1, "n": 4096, "k": 4096}, {"m": 1, "n": 11008, "k": 4096}],
            "budget": 0,
        },
    },
}
