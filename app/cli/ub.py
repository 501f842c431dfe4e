"""``tiler ub-analyze``: the UB banks, bank conflicts and cycles of vector instructions.

One vector instruction per input line (seed 001's parameters, addresses in UB as integers or hex
strings)::

    {"soc": "Ascend910B2", "op": "adds", "dtype": "fp16", "dst": "0x1FE00", "src0": "0x0",
     "repeat": 1, "dst_blk_stride": 16}

Keys: ``soc`` (default Ascend910B2), ``op``, ``dtype`` (fp16 default), ``dst``, ``src0``, ``src1``
(two-source ops only), ``repeat`` (1), ``dst_blk_stride``, ``src0_blk_stride``,
``src1_blk_stride`` (1), ``dst_rep_stride``, ``src0_rep_stride``, ``src1_rep_stride`` (8), ``mask``
(an int for the continuous mode, two ints for the bit mode; default every lane).

One JSON object per line comes out: ``blocks`` (the first repeat's blocks: ``operand``, ``index``,
``addr``, ``bank``, ``bank_group``), ``conflicts`` (``kind`` read_write / write_write / read_read,
``operands``, ``blocks``), ``cycles_per_repeat`` (first repeat) and ``cycles`` (the whole
instruction, issue overhead included); or ``{"line": N, "error": {...}}`` naming the bad field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.jsonl import run_jsonl


def analyze_line(data: Any) -> dict[str, Any]:
    """Analyses one instruction given as JSON data (the handler of one ``--jsonl`` line).

    Returns:
        ``blocks``, ``conflicts``, ``cycles_per_repeat`` and ``cycles``
        (:func:`simcore.ub.vector.analyze`).

    Raises:
        InputError: A key is unknown or missing, a value is malformed or out of range, a block
            lies outside the chip's UB, or ``soc`` names no preset (rule ``unknown_soc``).
    """
    # Loaded by the command that analyses, not by every `tiler` start.
    from simcore.errors import InputError, UnknownSocError
    from simcore.hardware.presets import load_preset
    from simcore.ub.vector import analyze, parse_vector_instruction

    instr = parse_vector_instruction(data)
    try:
        preset = load_preset(instr.soc)
    except UnknownSocError as exc:
        # Named after this command's own key, not the problem's ``problem.soc``.
        raise InputError("soc", "unknown_soc", str(exc), exc.soc, exc.known) from exc
    return analyze(instr, preset)


def ub_analyze_cmd(
    jsonl: Annotated[
        Path,
        typer.Option("--jsonl", help="File with one vector instruction per line ('-' for stdin)."),
    ],
) -> None:
    """Vector instructions per line -> UB banks, bank conflicts and cycles (seeds 000 and 001)."""
    run_jsonl(jsonl, analyze_line)
