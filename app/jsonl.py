"""Line-by-line JSON processing shared by the CLI's ``--jsonl`` commands."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from simcore.errors import InputError, SimcoreError, UnknownSocError


def error_object(exc: Exception) -> dict[str, Any]:
    """Turns an input error into the ``{"error": {...}}`` object the CLI prints for a line."""
    if isinstance(exc, InputError):
        return {"error": exc.to_dict()}
    if isinstance(exc, UnknownSocError):
        return {
            "error": {
                "field": "problem.soc",
                "rule": "unknown_soc",
                "message": str(exc),
                "value": exc.soc,
                "limit": exc.known,
            }
        }
    return {"error": {"field": None, "rule": type(exc).__name__, "message": str(exc)}}


def process_lines(
    lines: Iterable[str], handle: Callable[[Any], dict[str, Any]]
) -> Iterator[tuple[dict[str, Any], bool]]:
    """Parses each non-blank line as JSON and applies ``handle``.

    Yields:
        (output object, ok) per input line; malformed JSON and input errors become an ``error``
        object naming the line, the field and the rule, and processing goes on.
    """
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            yield (
                {
                    "line": number,
                    "error": {
                        "field": None,
                        "rule": "malformed_json",
                        "message": f"line {number}: {exc.msg} at column {exc.colno}",
                    },
                },
                False,
            )
            continue
        try:
            yield handle(data), True
        except (SimcoreError, ValueError) as exc:
            out = error_object(exc)
            out["line"] = number
            yield out, False
