"""Line-by-line JSON processing shared by the CLI's ``--jsonl`` commands.

Commands that take ``--jsonl FILE`` (``-`` for standard input) read one JSON request per line and
print one JSON object per line, in order. A line that cannot be processed prints an ``error``
object (field, rule, message) and the rest go on; the exit status is 1 when any line failed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from simcore.errors import InputError, SimcoreError, UnknownSocError

JsonlOption = Annotated[
    Path,
    typer.Option("--jsonl", help="File with one JSON request per line ('-' for stdin)."),
]


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


def read_lines(path: Path) -> list[str]:
    """The lines of a ``--jsonl`` file (``-``: standard input).

    Raises:
        typer.BadParameter: The file cannot be read (named in the message).
    """
    if str(path) == "-":
        return sys.stdin.read().splitlines()
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror}"
        raise typer.BadParameter(msg, param_hint="--jsonl") from exc


def run_jsonl(path: Path, handle: Callable[[Any], dict[str, Any]]) -> None:
    """Prints ``handle``'s answer to each line of ``path`` as it comes; exits 1 if a line failed.

    Each answer is flushed at once: a build system reading the pipe sees every line as soon as
    it is computed (a tune can take seconds).
    """
    failed = False
    for obj, ok in process_lines(read_lines(path), handle):
        failed |= not ok
        sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    raise typer.Exit(1 if failed else 0)
